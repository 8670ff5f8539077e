import AudioModem
import AudioModemTestKit
import Testing
import Tokens

/// Never a crash, never a token that was not sent.
@Suite("Robustness")
struct RobustnessTests {
  @Test("silence, loud white noise and clipped noise yield nothing")
  func noTokenFromNoise() throws {
    var generator = SeededGenerator(seed: 40)
    let scenario = Scenario()
    #expect(try scenario.decode([Float](repeating: 0, count: 96_000)).isEmpty)
    let noise = Channel.whiteNoise(count: 240_000, deviation: 0.3, using: &generator)
    #expect(try scenario.decode(noise).isEmpty)
    let clipped = noise.map { min(max($0 * 10, -1), 1) }
    #expect(try scenario.decode(clipped).isEmpty)
  }

  @Test("music-like noise yields nothing")
  func noTokenFromMusic() throws {
    var music = MusicLikeNoise(sampleRate: 48_000, seed: 41)
    #expect(try Scenario().decode(music.next(240_000)).isEmpty)
  }

  @Test("random bytes as samples, NaN and infinity included, in random buffer sizes")
  func randomBytes() throws {
    var generator = SeededGenerator(seed: 42)
    var decoder = try AudioModemDecoder()
    var found: [DecodedToken] = []
    for _ in 0..<200 {
      let count = Int(generator.next() % 4096)
      let buffer = (0..<count).map { _ in
        Float(bitPattern: UInt32(truncatingIfNeeded: generator.next()))
      }
      found += decoder.process(buffer)
    }
    found += decoder.process([.nan, .infinity, -.infinity, .greatestFiniteMagnitude])
    found += decoder.finish()
    #expect(found.isEmpty)
  }

  @Test("a truncated frame yields nothing", arguments: [0.3, 0.6, 0.9])
  func truncated(fraction: Double) throws {
    let frame = try AudioModemEncoder().samples(for: .random())
    let cut = Array(frame.prefix(Int(Double(frame.count) * fraction)))
    let audio = [Float](repeating: 0, count: 4_800) + cut + [Float](repeating: 0, count: 48_000)
    #expect(try Scenario().decode(audio).isEmpty)
  }

  @Test("a clipped frame gives its own token or none, never another")
  func clippedFrame() throws {
    let token = Token.random()
    let (audio, _) = try Scenario().audio(for: token)
    let clipped = audio.map { min(max($0 * 20, -1), 1) }
    #expect(try Scenario().decode(clipped).allSatisfy { $0.token == token })
  }

  @Test("buffers of any size give the same tokens and offsets as one buffer")
  func streaming() throws {
    var generator = SeededGenerator(seed: 43)
    let token = Token.random(using: &generator)
    var (audio, power) = try Scenario().audio(for: token)
    Channel.addWhiteNoise(
      to: &audio, cn0: 35, signalPower: power, sampleRate: 48_000, using: &generator)
    let whole = try Scenario().decode(audio)
    var decoder = try AudioModemDecoder()
    var pieces: [DecodedToken] = []
    var position = 0
    while position < audio.count {
      let count = min(audio.count - position, 1 + Int(generator.next() % 3000))
      pieces += decoder.process(Array(audio[position..<(position + count)]))
      position += count
    }
    pieces += decoder.finish()
    #expect(whole.map(\.token) == [token])
    #expect(pieces == whole)
  }
}
