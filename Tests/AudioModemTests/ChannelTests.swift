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

  @Test("two transmitters of equal power, the second starting inside the first: both decoded")
  func overlapping() async throws {
    var generator = SplitMix64(seed: 37)
    let scenario = Scenario(tail: 1.0)
    let encoder = try AudioModemEncoder()
    var both = 0
    for _ in 0..<8 {
      let first = Token.random(using: &generator)
      let second = Token.random(using: &generator)
      var (audio, power) = try scenario.audio(for: first)
      // From 0.1 s (past the first's preamble) to 0.8 s (its last symbols) later: misaligned,
      // each frame's chirps spread over two bins of the other's windows.
      let lag = 0.1 + 0.7 * generator.uniform()
      let offset = Int((scenario.lead + lag) * scenario.sampleRate)
      Channel.mix(encoder.samples(for: second), into: &audio, at: offset)
      Channel.addWhiteNoise(
        to: &audio, cn0: 45, signalPower: power, sampleRate: 48_000, using: &generator)
      let found = try await scenario.decode(audio).map(\.token)
      #expect(found.allSatisfy { $0 == first || $0 == second })
      if found.contains(first) && found.contains(second) { both += 1 }
    }
    #expect(both >= 7)
  }

  @Test("three transmitters of equal power, each starting inside the frame before: all decoded")
  func threeOverlapping() async throws {
    var generator = SplitMix64(seed: 38)
    let encoder = try AudioModemEncoder()
    var decoded = 0
    for _ in 0..<6 {
      let tokens = (0..<3).map { _ in Token.random(using: &generator) }
      var audio: [Float] = []
      var start = 4_800
      for token in tokens {
        Channel.mix(encoder.samples(for: token), into: &audio, at: start)
        start += Int((0.1 + 0.6 * generator.uniform()) * 48_000)
      }
      audio += [Float](repeating: 0, count: 14_400)
      Channel.addWhiteNoise(
        to: &audio, cn0: 45, signalPower: Channel.power(of: encoder.samples(for: tokens[0])),
        sampleRate: 48_000, using: &generator)
      let found = Set(try await Scenario().decode(audio).map(\.token))
      #expect(found.isSubset(of: tokens))
      decoded += found.count
    }
    #expect(decoded >= 14, "\(decoded) of 18 frames")
  }

  @Test("an echo of a frame 0.1–0.5 s later (a second speaker) reports its token once")
  func echoReportedOnce() async throws {
    var generator = SplitMix64(seed: 40)
    let scenario = Scenario(tail: 1.0)
    let encoder = try AudioModemEncoder()
    for _ in 0..<4 {
      let token = Token.random(using: &generator)
      var (audio, power) = try scenario.audio(for: token)
      let delay = 0.1 + 0.4 * generator.uniform()
      Channel.mix(
        encoder.samples(for: token), into: &audio,
        at: Int((scenario.lead + delay) * scenario.sampleRate), gainDB: -3)
      Channel.addWhiteNoise(
        to: &audio, cn0: 45, signalPower: power, sampleRate: 48_000, using: &generator)
      #expect(try await scenario.decode(audio).map(\.token) == [token])
    }
  }

  @Test("a frame's own data is not demodulated as other frames: few candidates a frame")
  func fewCandidatesPerFrame() async throws {
    var generator = SplitMix64(seed: 39)
    let encoder = try AudioModemEncoder()
    var audio: [Float] = []
    var tokens: [Token] = []
    for _ in 0..<12 {
      let token = Token.random(using: &generator)
      tokens.append(token)
      audio += [Float](repeating: 0, count: 24_000) + encoder.samples(for: token)
    }
    audio += [Float](repeating: 0, count: 14_400)
    Channel.addWhiteNoise(
      to: &audio, cn0: 35, signalPower: Channel.power(of: encoder.samples(for: tokens[0])),
      sampleRate: 48_000, using: &generator)
    let snapshot = audio
    let (found, candidates) = try await offPool {
      var decoder = try AudioModemDecoder(sampleRate: 48_000)
      let found = decoder.process(snapshot) + decoder.finish()
      return (found.map(\.token), decoder.candidatesDemodulated)
    }
    #expect(found == tokens)
    // Each failed candidate costs six demodulation passes: the CPU of a busy stream.
    #expect(candidates <= 2 * tokens.count, "\(candidates) candidates for \(tokens.count) frames")
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
