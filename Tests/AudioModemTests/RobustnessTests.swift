import AudioModem
import AudioModemTestKit
import Testing
import Tokens

/// Never a crash, never a token that was not sent.
@Suite("Robustness")
struct RobustnessTests {
  @Test("silence, loud white noise and clipped noise yield nothing")
  func noTokenFromNoise() async throws {
    var generator = SplitMix64(seed: 40)
    let scenario = Scenario()
    #expect(try await scenario.decode([Float](repeating: 0, count: 96_000)).isEmpty)
    let noise = Channel.whiteNoise(count: 240_000, deviation: 0.3, using: &generator)
    #expect(try await scenario.decode(noise).isEmpty)
    let clipped = noise.map { min(max($0 * 10, -1), 1) }
    #expect(try await scenario.decode(clipped).isEmpty)
  }

  @Test("music-like noise yields nothing")
  func noTokenFromMusic() async throws {
    let audio = try await offPool {
      var music = MusicLikeNoise(sampleRate: 48_000, seed: 41)
      return music.next(240_000)
    }
    #expect(try await Scenario().decode(audio).isEmpty)
  }

  @Test("random bytes as samples, NaN and infinity included, in random buffer sizes")
  func randomBytes() async throws {
    let found = try await offPool {
      var generator = SplitMix64(seed: 42)
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
      return found
    }
    #expect(found.isEmpty)
  }

  @Test("a truncated frame yields nothing", arguments: [0.3, 0.6, 0.9])
  func truncated(fraction: Double) async throws {
    let frame = try AudioModemEncoder().samples(for: .random())
    let cut = Array(frame.prefix(Int(Double(frame.count) * fraction)))
    let audio = [Float](repeating: 0, count: 4_800) + cut + [Float](repeating: 0, count: 48_000)
    #expect(try await Scenario().decode(audio).isEmpty)
  }

  @Test("a clipped frame gives its own token or none, never another")
  func clippedFrame() async throws {
    let token = Token.random()
    let (audio, _) = try Scenario().audio(for: token)
    let clipped = audio.map { min(max($0 * 20, -1), 1) }
    #expect(try await Scenario().decode(clipped).allSatisfy { $0.token == token })
  }

  @Test("buffers of any size give the same tokens and offsets as one buffer")
  func streaming() async throws {
    var generator = SplitMix64(seed: 43)
    let token = Token.random(using: &generator)
    var (audio, power) = try Scenario().audio(for: token)
    Channel.addWhiteNoise(
      to: &audio, cn0: 35, signalPower: power, sampleRate: 48_000, using: &generator)
    let whole = try await Scenario().decode(audio)
    let input = audio
    let chunking = generator
    let pieces = try await offPool {
      var generator = chunking
      let audio = input
      var decoder = try AudioModemDecoder()
      var pieces: [DecodedToken] = []
      var position = 0
      while position < audio.count {
        let count = min(audio.count - position, 1 + Int(generator.next() % 3000))
        pieces += decoder.process(Array(audio[position..<(position + count)]))
        position += count
      }
      pieces += decoder.finish()
      return pieces
    }
    #expect(whole.map(\.token) == [token])
    #expect(pieces == whole)
  }
}
