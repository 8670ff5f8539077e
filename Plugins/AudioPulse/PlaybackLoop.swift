import AudioModem
import Core
import Foundation
import Tokens

/// The playback thread: plays the current token's frame when ``FrameSchedule`` says (every
/// 2–3 s; less often once answered, where lostAfter leaves room; silence in between), cuts a
/// frame short when the token changes or stops, and reconnects after failures.
struct PlaybackLoop: Sendable {
  let medium: PulseAudioMedium

  func run() {
    let settings = medium.settings
    let clock = medium.clock
    var chunk = 480  // 10 ms at the stream's rate
    var silence = [Float](repeating: 0, count: chunk)
    var stream: PulseStream?
    var frame: [Float] = []
    var position = 0
    var schedule = FrameSchedule(configuration: settings, now: clock.now)
    var seen = 0
    var retryAt = clock.now
    var encoder: AudioModemEncoder?
    var generator = SystemRandomNumberGenerator()
    var lastToken: Token?

    while true {
      let (shutdown, token, request, pace) = medium.withState {
        ($0.shutdown, $0.token, $0.transmitRequest, $0.pace)
      }
      if shutdown { break }
      if request != seen {
        // A new token or a stop: drop what is queued and start over at once.
        stream?.flush()
        seen = request
        frame = token.flatMap { token in encoder?.samples(for: token) } ?? []
        position = frame.count
        schedule.restart(at: clock.now, newToken: token != lastToken)
        lastToken = token
        if token == nil { stream = nil }
        medium.withState { $0.transmitDone = max($0.transmitDone, request) }
      }
      guard let token else {
        Thread.sleep(forTimeInterval: 0.01)
        continue
      }
      if let pace, pace.token == token {
        schedule.setPace(pace.pace, at: clock.now, using: &generator)
      }
      if stream == nil {
        guard clock.now >= retryAt else {
          Thread.sleep(forTimeInterval: 0.01)
          continue
        }
        let rate = settings.rate(isSink: true)
        guard ModemParameters.sampleRates.contains(Double(rate)),
          let rateEncoder = try? AudioModemEncoder(sampleRate: Double(rate), level: settings.level)
        else {
          medium.setProblem(medium.status(forRate: rate, device: "the speaker"), playback: true)
          retryAt = clock.now + .seconds(1)
          continue
        }
        do {
          stream = try PulseStream(
            direction: .playback, server: settings.server, device: settings.sink,
            sampleRate: rate, latency: settings.playbackLatency, name: "nearby token")
          if encoder?.sampleRate != rateEncoder.sampleRate {
            encoder = rateEncoder
            frame = rateEncoder.samples(for: token)
            chunk = max(1, rate / 100)
            silence = [Float](repeating: 0, count: chunk)
          }
          medium.setProblem(nil, playback: true)
          // A fresh stream starts with 150 ms of silence: the server settles the new stream
          // (buffering, rewinds of what the sink already rendered) on silence, not on a
          // preamble. A frame cut by the reconnection starts again.
          position = frame.count
          schedule.delay(until: clock.now + .milliseconds(150))
        } catch {
          medium.setProblem(medium.status(for: error, device: "the speaker"), playback: true)
          retryAt = clock.now + .seconds(1)
          continue
        }
      }
      guard let current = stream else { continue }
      if position >= frame.count,
        schedule.shouldStart(
          at: clock.now, busy: medium.withState { $0.receiving }, using: &generator)
      {
        position = 0
      }
      do {
        if position < frame.count {
          let end = min(position + chunk, frame.count)
          try frame[position..<end].withUnsafeBufferPointer { try current.write($0) }
          position = end
        } else {
          try silence.withUnsafeBufferPointer { try current.write($0) }
        }
      } catch {
        let error = PulseStream.Failure(error)
        medium.log.warning("audio playback failed", metadata: ["error": "\(error.text)"])
        stream = nil
        medium.setProblem(medium.status(for: error, device: "the speaker"), playback: true)
        retryAt = clock.now + .seconds(1)
      }
    }
    stream = nil
    medium.threadFinished()
  }
}
