import Foundation
import AudioModem
import AudioModemTestKit
import Tokens

/// Builds test audio: silence, one frame at a given lead, silence; and decodes it.
struct Scenario {
  var sampleRate = 48_000.0
  var lead = 0.25
  var tail = 0.3

  func audio(for token: Token) throws -> (audio: [Float], power: Double) {
    let frame = try AudioModemEncoder(sampleRate: sampleRate).samples(for: token)
    let audio =
      [Float](repeating: 0, count: Int(lead * sampleRate)) + frame
      + [Float](repeating: 0, count: Int(tail * sampleRate))
    return (audio, Channel.power(of: frame))
  }

  /// Decodes on a thread of its own: decoding seconds of audio in a debug build would hold a
  /// cooperative thread (of two, here) for that long and starve other suites' timers.
  func decode(_ audio: [Float]) async throws -> [DecodedToken] {
    let sampleRate = sampleRate
    return try await offPool {
      var decoder = try AudioModemDecoder(sampleRate: sampleRate)
      return decoder.process(audio) + decoder.finish()
    }
  }
}

/// Runs CPU-heavy work on a new thread and returns its result (never blocks the pool).
func offPool<T: Sendable>(_ body: @escaping @Sendable () throws -> T) async throws -> T {
  try await withCheckedThrowingContinuation { continuation in
    Thread.detachNewThread {
      continuation.resume(with: Result { try body() })
    }
  }
}
