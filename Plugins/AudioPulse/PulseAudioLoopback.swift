import Core
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
  /// recording, from before the playback starts to `tail` seconds after it has all been
  /// written (at most `lead` + the samples' duration + `tail` + 10 s). Runs on two dedicated
  /// threads; the caller's task only waits. The end of the recording is read on `clock`.
  /// - Throws: ``PulseAudioConfigurationError`` for a configuration out of range
  ///   (``PulseAudioConfiguration/validate()``); ``Failure`` when `lead` or `tail` is not
  ///   within 0–60 s, or when either stream cannot be opened or fails.
  public static func run(
    _ samples: [Float], configuration: PulseAudioConfiguration, lead: Double = 0.3,
    tail: Double = 1.5, clock: any Clock<Duration> = ContinuousClock()
  ) async throws -> [Float] {
    try configuration.validate()
    guard (0...60).contains(lead), (0...60).contains(tail) else {
      throw Failure(description: "lead \(lead) s and tail \(tail) s must be within 0–60 s")
    }
    let clock = NearbyClock(clock)
    let rate = configuration.sampleRate ?? 48_000
    // Recording goes on until the playback has been written and `tail` more seconds (plus the
    // playback buffer) have been recorded: a slow start of either stream does not cut the end.
    let most = Int(Double(rate) * (lead + tail + 10)) + samples.count
    let result = Mutex<(recording: [Float]?, error: String?, done: Int)>((nil, nil, 0))
    let recordingStarted = Mutex(false)
    let playbackEnded = Mutex<NearbyClock.Instant?>(nil)
    let drain = Duration.seconds(tail)
    Thread.detachNewThread {
      do {
        let stream = try PulseStream(
          direction: .record, server: configuration.server, device: configuration.source,
          sampleRate: rate, latency: configuration.recordFragment, name: "nearby selftest")
        recordingStarted.withLock { $0 = true }
        let fragment = max(1, Int(Double(rate) * configuration.recordFragment))
        var recording: [Float] = []
        var piece = [Float](repeating: 0, count: fragment)
        while recording.count < most {
          if let ended = playbackEnded.withLock({ $0 }), clock.now > ended + drain {
            break
          }
          try piece.withUnsafeMutableBufferPointer { try stream.read(into: $0) }
          recording += piece
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
        // Freeing the stream would drop what is still buffered: wait until it has played.
        try stream.drain()
        playbackEnded.withLock { $0 = clock.now }
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
    // A watchdog counted in 10 ms polls (the expected time and 5 s more), not read on `clock`,
    // so that a clock held still cannot make it wait for ever.
    var polls = Int((Double(most) / Double(rate) + 5) * 100)
    while result.withLock({ $0.done < 2 }) {
      guard polls > 0 else {
        throw Failure(description: "PulseAudio did not play and record within the time expected")
      }
      polls -= 1
      try await Task.sleep(for: .milliseconds(10))
    }
    let (recording, error, _) = result.withLock { $0 }
    if let error { throw Failure(description: error) }
    return recording ?? []
  }
}
