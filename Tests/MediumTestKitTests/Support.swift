import TestSupport
import Core
import Strategy
import MediumTestKit
import Testing
import Tokens
import NearbyTesting

/// The simulated mediums the tests run on.
typealias Kind = DiscoveryMediums

extension DiscoveryMediums {
  static let allCases: [DiscoveryMediums] = [.ble, .audio]

  /// A medium of this kind for `device` on `air`.
  func medium(on air: Air, device: String) async -> AirMedium {
    await air.makeMedium(device: device, kind: self)
  }

  /// Whether `sighting` was made on this medium.
  func matches(_ sighting: Sighting) -> Bool { sighting.medium == self }

  /// Reports `status` on this medium of `device`.
  func setStatus(_ status: MediumStatus, on air: Air, device: String) async {
    await air.setStatus(status, device: device, medium: self)
  }

  /// Whether `hearer` can hear `speaker` on this medium now.
  func canHear(_ hearer: String, _ speaker: String, on air: Air) async -> Bool {
    await air.canHear(hearer, speaker, on: self)
  }

  /// This medium's range in `configuration`, in metres.
  func range(in configuration: Air.Configuration) -> Double {
    self == .audio ? configuration.audioRange : configuration.bleRange
  }
}

/// An air with a short advertising interval, on `clock`: by default a `ManualClock` nobody
/// advances, so the air has only the rounds a test makes (`Air.pulse()`, or a clock it keeps and
/// advances with `elapse(_:waiting:)`).
func makeAir(
  interval: Duration = .milliseconds(20), clock: any Clock<Duration> = ManualClock(),
  _ configure: (inout Air.Configuration) -> Void = { _ in }
) -> Air {
  var configuration = Air.Configuration()
  configuration.advertiseInterval = interval
  configuration.clock = clock
  configure(&configuration)
  return Air(configuration: configuration)
}

extension Air {
  /// Makes `count` advertising rounds by hand.
  func rounds(_ count: Int) async {
    for _ in 0..<count { pulse() }
  }
}

extension ManualClock {
  /// Advances by `duration`, then waits (bounded) until the air on this clock has caught up:
  /// `waiting` tasks wait on it again (its rounds, one; with sightings in flight, two). A
  /// task woken by the advance waits on the clock again only after its work.
  func elapse(_ duration: Duration, waiting: Int = 1) async {
    advance(by: duration)
    let caughtUp = await untilSleepers { $0 == waiting }
    #expect(caughtUp, "\(sleeperCount) tasks wait on the clock, expected \(waiting)")
  }
}

/// Waits (bounded) until `recorders` together hold every sighting `air` delivered (`Air.delivered`):
/// once they do, a sighting the air gave any of them has been read, so checking that one was
/// not heard is not racing the readers. The recorders must be those of every medium that scans.
func received(_ air: Air, by recorders: Recorder<Sighting>...) async {
  let delivered = await air.delivered
  let read = await eventually { recorders.map(\.elements.count).reduce(0, +) >= delivered }
  #expect(read, "the recorders hold fewer sightings than the \(delivered) delivered")
}

typealias Recorder = StreamRecorder
