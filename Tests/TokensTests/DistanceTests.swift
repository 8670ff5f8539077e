import Foundation
import Testing
import Tokens

@Suite("Path-loss model")
struct PathLossModelTests {
  @Test("at the power received at 1 m, the distance is 1 m")
  func oneMetre() {
    let model = PathLossModel()
    #expect(abs(model.distance(rssi: -59, reference: .atOneMetre(-59)).metres - 1) < 1e-12)
    // Eddystone: TX power at 0 m, 41 dB lost over the first metre.
    #expect(abs(model.distance(rssi: -59, reference: .atZeroMetres(-18)).metres - 1) < 1e-12)
    #expect(model.powerAtOneMetre(.atZeroMetres(-18)) == -59)
    #expect(model.powerAtOneMetre(.atOneMetre(-70)) == -70)
  }

  @Test(
    "10·n dB less is ten times as far",
    arguments: [
      (2.0, -79.0, 10.0), (2.0, -99.0, 100.0), (3.0, -89.0, 10.0), (4.0, -99.0, 10.0),
      (2.0, -53.0, 0.5011872336272722),
    ])
  func logDistance(exponent: Double, rssi: Double, metres: Double) {
    let model = PathLossModel(exponent: exponent)
    let estimate = model.distance(rssi: rssi, reference: .atOneMetre(-59))
    #expect(abs(estimate.metres - metres) / metres < 1e-9)
  }

  @Test("accuracy is the half-width of the interval RSSI ± spread gives, floored")
  func accuracy() {
    let model = PathLossModel(exponent: 2, minimumSpread: 4)
    // -79 dBm at P₁ = -59: 10 m; ± 4 dB → 10^(24/20) and 10^(16/20).
    let floor = model.distance(rssi: -79, reference: .atOneMetre(-59), spread: 1)
    let expected = (pow(10, 24.0 / 20) - pow(10, 16.0 / 20)) / 2
    #expect(abs(floor.accuracy - expected) < 1e-9)
    #expect(model.distance(rssi: -79, reference: .atOneMetre(-59)) == floor)
    let wide = model.distance(rssi: -79, reference: .atOneMetre(-59), spread: 8)
    #expect(wide.accuracy > floor.accuracy)
    // Farther is less certain.
    let far = model.distance(rssi: -89, reference: .atOneMetre(-59))
    #expect(far.accuracy > floor.accuracy)
    #expect(far.metres > floor.metres)
  }

  @Test("a smoothed signal goes straight into the model")
  func fromSmoothed() {
    let model = PathLossModel()
    let signal = SmoothedSignal(rssi: -79, spread: 6, sampleCount: 5)
    #expect(
      model.distance(signal, reference: .atOneMetre(-59))
        == model.distance(rssi: -79, reference: .atOneMetre(-59), spread: 6))
  }
}

@Suite("RSSI smoother")
struct RSSISmootherTests {
  typealias Instant = ContinuousClock.Instant
  static let start = ContinuousClock.now

  static func at(_ seconds: Double) -> Instant { start + .milliseconds(Int(seconds * 1000)) }

  @Test("the median ignores outliers that a mean would follow")
  func outliers() throws {
    var smoother = RSSISmoother<Instant>()
    let samples = [-70, -71, -69, -40, -70, -100, -72, -70, -68]
    var last: SmoothedSignal?
    for (index, rssi) in samples.enumerated() {
      last = smoother.add(rssi: rssi, at: Self.at(Double(index) * 0.1))
    }
    let signal = try #require(last)
    #expect(signal.rssi == -70)
    #expect(signal.sampleCount == 9)
    // MAD of the deviations [0,1,1,30,0,30,2,0,2] is 1 → 1.4826 dB.
    #expect(abs(signal.spread - 1.4826) < 1e-9)
  }

  @Test("an even count takes the mean of the middle two; one sample has no spread")
  func evenAndSingle() throws {
    var smoother = RSSISmoother<Instant>()
    let oneValue = smoother.add(rssi: -60, at: Self.at(0))
    let one = try #require(oneValue)
    #expect(one == SmoothedSignal(rssi: -60, spread: 0, sampleCount: 1))
    let twoValue = smoother.add(rssi: -70, at: Self.at(0.1))
    let two = try #require(twoValue)
    #expect(two.rssi == -65)
  }

  @Test("samples older than the window drop out")
  func window() throws {
    var smoother = RSSISmoother<Instant>(window: .seconds(2))
    smoother.add(rssi: -50, at: Self.at(0))
    smoother.add(rssi: -50, at: Self.at(0.5))
    smoother.add(rssi: -80, at: Self.at(2.2))
    let signalValue = smoother.add(rssi: -80, at: Self.at(2.4))
    let signal = try #require(signalValue)
    // At 2.4 s the window starts at 0.4 s: -50 (0.5 s), -80, -80.
    #expect(signal.sampleCount == 3)
    #expect(signal.rssi == -80)
    #expect(smoother.value(at: Self.at(10)) == nil)
    #expect(smoother.sampleCount == 0)
  }

  @Test("at most `capacity` samples, the newest kept")
  func capacity() throws {
    var smoother = RSSISmoother<Instant>(window: .seconds(60), capacity: 3)
    for (index, rssi) in [-90, -90, -90, -60, -61, -62].enumerated() {
      smoother.add(rssi: rssi, at: Self.at(Double(index)))
    }
    let signalValue = smoother.value(at: Self.at(6))
    let signal = try #require(signalValue)
    #expect(signal.sampleCount == 3)
    #expect(signal.rssi == -61)
  }

  @Test("values outside -127…20 dBm (127 = not available) are dropped")
  func invalid() {
    var smoother = RSSISmoother<Instant>()
    #expect(smoother.add(rssi: 127, at: Self.at(0)) == nil)
    #expect(smoother.add(rssi: -128, at: Self.at(0)) == nil)
    #expect(smoother.add(rssi: -60, at: Self.at(0))?.sampleCount == 1)
  }

  @Test("a beacon walking away: smoothed distance grows and stays finite")
  func walkingAway() throws {
    var smoother = RSSISmoother<Instant>(window: .seconds(2))
    let model = PathLossModel(exponent: 2)
    var generator = SplitMix64(seed: 7)
    var distances: [Double] = []
    for step in 0..<100 {
      let metres = 1 + Double(step) * 0.2  // 1 m → 20.8 m in 10 s
      let noise = Double.random(in: -3...3, using: &generator)
      let rssi = Int((-59 - 20 * log10(metres) + noise).rounded())
      let signalValue = smoother.add(rssi: rssi, at: Self.at(Double(step) * 0.1))
      let signal = try #require(signalValue)
      distances.append(model.distance(signal, reference: .atOneMetre(-59)).metres)
    }
    #expect(distances.allSatisfy { $0.isFinite && $0 > 0 })
    #expect(distances[99] > 3 * distances[10])
    #expect(abs(distances[99] - 19) < 8)
  }
}
