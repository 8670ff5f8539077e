import AudioModem
import AudioModemTestKit
import Testing
import Tokens

/// A few points of each impairment of the channel simulator. Rates are measured in
/// `nearby bench audio`; here each point must decode its token (seeded, so repeatable).
@Suite("Through the simulated channel")
struct ChannelTests {
  @Test("white noise at 30 dB-Hz, 44.1 and 48 kHz", arguments: [44_100.0, 48_000.0])
  func whiteNoise(sampleRate: Double) async throws {
    var generator = SplitMix64(seed: 30)
    let scenario = Scenario(sampleRate: sampleRate)
    var decoded = 0
    for _ in 0..<8 {
      let token = Token.random(using: &generator)
      var (audio, power) = try scenario.audio(for: token)
      Channel.addWhiteNoise(
        to: &audio, cn0: 30, signalPower: power, sampleRate: sampleRate, using: &generator)
      let found = try await scenario.decode(audio)
      #expect(found.allSatisfy { $0.token == token })
      if found.map(\.token) == [token] { decoded += 1 }
    }
    #expect(decoded == 8)
  }

  @Test("the SNR estimate is within 3 dB at 30 and 40 dB-Hz")
  func snrEstimate() async throws {
    var generator = SplitMix64(seed: 31)
    let scenario = Scenario()
    for cn0 in [30.0, 40.0] {
      let token = Token.random(using: &generator)
      var (audio, power) = try scenario.audio(for: token)
      Channel.addWhiteNoise(
        to: &audio, cn0: cn0, signalPower: power, sampleRate: 48_000, using: &generator)
      let found = try #require(try await scenario.decode(audio).first)
      #expect(abs(found.carrierToNoiseDBHz - cn0) < 3, "at \(cn0) dB-Hz")
    }
  }

  @Test("gain does not matter: −30 dB and +6 dB", arguments: [-30.0, 6.0])
  func gain(decibels: Double) async throws {
    var generator = SplitMix64(seed: 32)
    let token = Token.random(using: &generator)
    let scenario = Scenario()
    var (audio, power) = try scenario.audio(for: token)
    Channel.addWhiteNoise(
      to: &audio, cn0: 40, signalPower: power, sampleRate: 48_000, using: &generator)
    Channel.applyGain(&audio, decibels: decibels)
    #expect(try await scenario.decode(audio).map(\.token) == [token])
  }

  @Test("clock offset of ±0.5 % at 35 dB-Hz, measured as ±96 Hz", arguments: [-0.005, 0.005])
  func clockOffset(offset: Double) async throws {
    var generator = SplitMix64(seed: 33)
    let scenario = Scenario()
    for _ in 0..<3 {
      let token = Token.random(using: &generator)
      let (clean, power) = try scenario.audio(for: token)
      var audio = try await offPool { Channel.resample(clean, clockOffset: offset) }
      Channel.addWhiteNoise(
        to: &audio, cn0: 35, signalPower: power, sampleRate: 48_000, using: &generator)
      let found = try await scenario.decode(audio)
      #expect(found.map(\.token) == [token])
      if let first = found.first {
        #expect(abs(first.frequencyOffset - offset * ModemParameters.centerFrequency) < 15)
      }
    }
  }

  @Test("room with RT60 0.6 s, reverberation as strong as the direct sound")
  func room() async throws {
    var generator = SplitMix64(seed: 34)
    let scenario = Scenario()
    var decoded = 0
    for _ in 0..<4 {
      let token = Token.random(using: &generator)
      let (clean, power) = try scenario.audio(for: token)
      let response = Channel.roomImpulseResponse(
        rt60: 0.6, sampleRate: 48_000, using: &generator)
      var audio = try await offPool { Channel.convolve(clean, with: response) }
      Channel.addWhiteNoise(
        to: &audio, cn0: 40, signalPower: power, sampleRate: 48_000, using: &generator)
      let found = try await scenario.decode(audio)
      #expect(found.allSatisfy { $0.token == token })
      if found.map(\.token) == [token] { decoded += 1 }
    }
    #expect(decoded >= 3)
  }

  @Test("a second transmitter 6 dB weaker, overlapping: the stronger token is decoded")
  func capture() async throws {
    var generator = SplitMix64(seed: 35)
    let scenario = Scenario()
    for _ in 0..<3 {
      let strong = Token.random(using: &generator)
      let weak = Token.random(using: &generator)
      var (audio, power) = try scenario.audio(for: strong)
      let weakFrame = try AudioModemEncoder().samples(for: weak)
      let offset = Int((0.05 + 0.5 * generator.uniform()) * 48_000)
      Channel.mix(weakFrame, into: &audio, at: offset, gainDB: -6)
      Channel.addWhiteNoise(
        to: &audio, cn0: 40, signalPower: power, sampleRate: 48_000, using: &generator)
      let found = try await scenario.decode(audio).map(\.token)
      #expect(found.contains(strong))
      #expect(found.allSatisfy { $0 == strong || $0 == weak })
    }
  }

  @Test("frames back to back are all found, in order, at their offsets")
  func sequence() async throws {
    var generator = SplitMix64(seed: 36)
    let encoder = try AudioModemEncoder()
    let tokens = (0..<3).map { _ in Token.random(using: &generator) }
    var audio: [Float] = []
    var starts: [Double] = []
    for token in tokens {
      audio += [Float](repeating: 0, count: 12_000)
      starts.append(Double(audio.count) / 48_000)
      audio += encoder.samples(for: token)
    }
    audio += [Float](repeating: 0, count: 12_000)
    let found = try await Scenario().decode(audio)
    #expect(found.map(\.token) == tokens)
    for (decoded, start) in zip(found, starts) { #expect(abs(decoded.offset - start) < 0.002) }
  }
}
