import Foundation
import Synchronization

/// Plays samples and records at the same time, once: for checking a speaker → microphone path
/// (`nearby audio selftest`).
public enum PulseAudioLoopback {
  /// Why the loopback could not run: the PulseAudio error text and what it was doing.
  public struct Failure: Error, CustomStringConvertible {
    public var description: String
  }

  /// The rate `run` uses for `configuration`: its own, or the source's (48000 when unknown).
  /// Blocks for up to 2 s: call it from a thread of its own or accept the wait.
  public static func sampleRate(for configuration: PulseAudioConfiguration) -> Int {
    configuration.rate(isSink: false)
  }

  /// Records from the configured source while playing `samples` (mono, at the configured rate,
  /// 48000 when none is set)
  /// into the configured sink, starting `lead` seconds into the recording; returns the
  /// recording, `lead` + the samples' duration + `tail` seconds long. Runs on two dedicated
  /// threads; the caller's task only waits.
  /// - Throws: ``Failure`` when either stream cannot be opened or fails.
  public static func run(
    _ samples: [Float], configuration: PulseAudioConfiguration, lead: Double = 0.3,
    tail: Double = 0.5
  ) async throws -> [Float] {
    let rate = configuration.sampleRate ?? 48_000
    let total = Int(Double(rate) * lead) + samples.count + Int(Double(rate) * tail)
    let result = Mutex<(recording: [Float]?, error: String?, done: Int)>((nil, nil, 0))
    let recordingStarted = Mutex(false)
    Thread.detachNewThread {
      do {
        let stream = try PulseStream(
          direction: .record, server: configuration.server, device: configuration.source,
          sampleRate: rate, latency: configuration.recordFragment, name: "nearby selftest")
        recordingStarted.withLock { $0 = true }
        var recording = [Float](repeating: 0, count: total)
        let fragment = max(1, Int(Double(rate) * configuration.recordFragment))
        var position = 0
        while position < total {
          let end = min(position + fragment, total)
          try recording[position..<end].withUnsafeMutableBufferPointer {
            try stream.read(into: $0)
          }
          position = end
        }
        result.withLock {
          $0.recording = recording
          $0.done += 1
        }
      } catch {
        recordingStarted.withLock { $0 = true }
        result.withLock {
          $0.error =
            "recording from \(configuration.source ?? "the default source"): "
            + PulseStream.Failure(error).text
          $0.done += 1
        }
      }
    }
    Thread.detachNewThread {
      while !recordingStarted.withLock({ $0 }) { Thread.sleep(forTimeInterval: 0.005) }
      do {
        let stream = try PulseStream(
          direction: .playback, server: configuration.server, device: configuration.sink,
          sampleRate: rate, latency: configuration.playbackLatency, name: "nearby selftest")
        let audio = [Float](repeating: 0, count: Int(Double(rate) * lead)) + samples
        try audio.withUnsafeBufferPointer { try stream.write($0) }
        result.withLock { $0.done += 1 }
      } catch {
        result.withLock {
          $0.error =
            "playing into \(configuration.sink ?? "the default sink"): "
            + PulseStream.Failure(error).text
          $0.done += 1
        }
      }
    }
    let limit = ContinuousClock.now + .seconds(Double(total) / Double(rate) + 10)
    while result.withLock({ $0.done < 2 }) {
      guard ContinuousClock.now < limit else {
        throw Failure(description: "PulseAudio did not play and record within the time expected")
      }
      try await Task.sleep(for: .milliseconds(10))
    }
    let (recording, error, _) = result.withLock { $0 }
    if let error { throw Failure(description: error) }
    return recording ?? []
  }
}
