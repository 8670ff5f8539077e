import AudioModem
import Core
import Foundation

/// The record thread: while scanning, reads 20 ms fragments, decodes them and reports every
/// token heard; reconnects after failures. At start it opens the source once to report the
/// medium's first status.
struct CaptureLoop: Sendable {
  let medium: PulseAudioMedium

  func run() {
    let settings = medium.settings
    let clock = medium.clock
    var buffer: [Float] = []
    var stream: PulseStream?
    var decoder: AudioModemDecoder?
    var seen = -1
    var retryAt = clock.now
    // Whether the status is known from a stream that opened; until then (and after a
    // failure) the thread keeps trying every second even when not scanning, so that the
    // status recovers when the server comes (back).
    var probed = false
    var probeFailed = false
    var unacknowledged: Int?
    func acknowledge(_ request: Int) {
      medium.withState { $0.scanDone = max($0.scanDone, request) }
      unacknowledged = nil
    }

    while true {
      let (shutdown, scanning, request) = medium.withState {
        ($0.shutdown, $0.scanning, $0.scanRequest)
      }
      if shutdown { break }
      if request != seen {
        seen = request
        if !scanning {
          stream = nil
          decoder = nil
          medium.withState { $0.receiving = false }
        }
        // Acknowledged once the stream is open (or failed): startScanning returns when
        // listening has begun.
        if !scanning || stream != nil { acknowledge(request) } else { unacknowledged = request }
      }
      if !scanning && probed && !probeFailed {
        Thread.sleep(forTimeInterval: 0.01)
        continue
      }
      if stream == nil {
        guard clock.now >= retryAt else {
          Thread.sleep(forTimeInterval: 0.01)
          continue
        }
        let rate = settings.rate(isSink: false)
        guard ModemParameters.sampleRates.contains(Double(rate)) else {
          medium.setProblem(medium.status(forRate: rate, device: "the microphone"), playback: false)
          retryAt = clock.now + .seconds(1)
          probed = true
          probeFailed = true
          if let request = unacknowledged { acknowledge(request) }
          continue
        }
        do {
          stream = try PulseStream(
            direction: .record, server: settings.server, device: settings.source,
            sampleRate: rate, latency: settings.recordFragment, name: "nearby listener")
          decoder = try? AudioModemDecoder(sampleRate: Double(rate))
          buffer = [Float](repeating: 0, count: max(1, Int(Double(rate) * settings.recordFragment)))
          medium.setProblem(nil, playback: false)
        } catch {
          medium.setProblem(medium.status(for: error, device: "the microphone"), playback: false)
          retryAt = clock.now + .seconds(1)
          probed = true
          probeFailed = true
          if let request = unacknowledged { acknowledge(request) }
          continue
        }
        if let request = unacknowledged { acknowledge(request) }
        probeFailed = false
        if !scanning {
          probed = true
          stream = nil
          continue
        }
      }
      guard let current = stream else { continue }
      do {
        try buffer.withUnsafeMutableBufferPointer { try current.read(into: $0) }
      } catch {
        let error = PulseStream.Failure(error)
        medium.log.warning("audio capture failed", metadata: ["error": "\(error.text)"])
        stream = nil
        medium.setProblem(medium.status(for: error, device: "the microphone"), playback: false)
        retryAt = clock.now + .seconds(1)
        continue
      }
      guard var active = decoder else { continue }
      let found = active.process(buffer)
      let receiving = active.isReceiving
      decoder = active
      medium.withState { $0.receiving = receiving }
      for token in found { medium.report(token) }
    }
    stream = nil
    medium.threadFinished()
  }
}
