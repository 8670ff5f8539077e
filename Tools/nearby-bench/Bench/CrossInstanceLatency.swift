import ResolverWire
import AsyncHTTPClient
import CommandLineSupport
import Foundation
import NIOCore
import Synchronization

/// How long a found caused by a report on one server instance takes to reach a device's event
/// stream open on another instance (both on one database).
///
/// A watcher device on instance B subscribes to a type of its own and opens its event stream
/// there. Then, one sample at a time, a new device on instance A publishes a message of that
/// type and reports having heard the watcher's token: that report makes the watcher's `found`.
/// The latency runs from sending the report to the event's `data:` line arriving on the stream.
enum CrossInstanceLatency {
  struct Result {
    var samples: [Double]
    var timeouts: Int

    var dictionary: [String: Any] {
      [
        "samples": samples.count, "timeouts": timeouts, "p50_ms": percentile(0.50),
        "p99_ms": percentile(0.99), "max_ms": samples.max() ?? .nan,
      ]
    }

    func percentile(_ fraction: Double) -> Double {
      guard !samples.isEmpty else { return .nan }
      let sorted = samples.sorted()
      return sorted[min(sorted.count - 1, Int((Double(sorted.count) * fraction).rounded(.up)) - 1)]
    }

    func line() -> String {
      String(
        format:
          "found across instances: p50 %.1f ms, p99 %.1f ms, max %.1f ms, %d samples, %d timed out",
        percentile(0.50), percentile(0.99), samples.max() ?? .nan, samples.count, timeouts)
    }
  }

  /// Measures `samples` founds from `reportingBase` to a stream on `streamBase`; each waits at
  /// most `timeout` (a sample that times out is counted, not measured).
  /// - Throws: ``CommandFailure`` when a registration, a report or the stream fails.
  static func measure(
    reportingBase: String, streamBase: String, key: String, samples: Int, timeout: Duration
  ) async throws -> Result {
    let type = "bench-watch-\(UInt32.random(in: 0...UInt32.max))"
    let watcher = try await BenchFleet.post(
      streamBase + "/v1/devices", key: key, secret: nil, body: nil)
    guard let watcherID = watcher["id"] as? String, let watcherSecret = watcher["secret"] as? String
    else { throw CommandFailure("registration answered \(watcher)") }
    let subscribed = try await BenchFleet.post(
      streamBase + "/v1/devices/\(watcherID)/report", key: key, secret: watcherSecret,
      body: #"{"subscribe": [{"id": "\#(UUID().uuidString)", "type": "\#(type)"}]}"#)
    guard let directives = subscribed["directives"] as? [String: Any],
      let watcherToken = directives["token"] as? String
    else { throw CommandFailure("report answered \(subscribed)") }

    let arrivals = Arrivals()
    let opened = try await openStream(
      streamBase + "/v1/devices/\(watcherID)/events", key: key, secret: watcherSecret)
    let reader = Task {
      var pending = ""
      do {
        for try await chunk in opened.body {
          pending += String(buffer: chunk)
          while let newline = pending.firstIndex(of: "\n") {
            let line = pending[..<newline]
            pending = String(pending[pending.index(after: newline)...])
            guard line.hasPrefix("data:") else { continue }
            let json = line.dropFirst(5).trimmingCharacters(in: .whitespaces)
            if let event = try? JSONSerialization.jsonObject(with: Data(json.utf8))
              as? [String: Any], event["kind"] as? String == "found"
            {
              arrivals.record(.now)
            }
          }
        }
      } catch {}
    }
    defer { reader.cancel() }

    var result = Result(samples: [], timeouts: 0)
    for index in 0..<samples {
      let reporter = try await BenchFleet.post(
        reportingBase + "/v1/devices", key: key, secret: nil, body: nil)
      guard let id = reporter["id"] as? String, let secret = reporter["secret"] as? String
      else { throw CommandFailure("registration answered \(reporter)") }
      let content = Data("sample \(index)".utf8).base64EncodedString()
      _ = try await BenchFleet.post(
        reportingBase + "/v1/devices/\(id)/report", key: key, secret: secret,
        body: #"""
          {"publish": [{"id": "\#(UUID().uuidString)", "message": {"content": "\#(content)", "type": "\#(type)"}}]}
          """#)
      // Heard now: the server ignores sightings heard more than 30 s before they arrive.
      let time = ISO8601DateFormatter().string(from: Date())
      let sighting =
        #"{"sightings":[{"token":"\#(watcherToken)","medium":"ble","rssi":-60,"time":"\#(time)"}]}"#
      let start = ContinuousClock.now
      _ = try await BenchFleet.post(
        reportingBase + "/v1/devices/\(id)/report", key: key, secret: secret, body: sighting)
      // The reader stamps each found as it arrives; this loop only notices it.
      var arrival: ContinuousClock.Instant?
      let deadline = start + timeout
      while arrival == nil, ContinuousClock.now < deadline {
        arrival = arrivals.take(after: start)
        if arrival == nil { try? await Task.sleep(for: .milliseconds(1)) }
      }
      if let arrival {
        result.samples.append((arrival - start).seconds * 1000)
      } else {
        result.timeouts += 1
      }
    }
    return result
  }

  private static func openStream(_ url: String, key: String, secret: String) async throws
    -> HTTPClientResponse
  {
    var request = HTTPClientRequest(url: url)
    request.headers.add(name: ResolverContract.apiKeyHeader, value: key)
    request.headers.add(name: ResolverContract.deviceSecretHeader, value: secret)
    request.headers.add(name: "Accept", value: "text/event-stream")
    let response = try await HTTPClient.shared.execute(request, timeout: .hours(24))
    guard response.status.code == 200 else {
      throw CommandFailure("the event stream answered \(response.status.code)")
    }
    return response
  }
}

/// The instants at which found events arrived on the stream, in order.
private final class Arrivals: Sendable {
  private let instants = Mutex<[ContinuousClock.Instant]>([])

  func record(_ instant: ContinuousClock.Instant) { instants.withLock { $0.append(instant) } }

  /// Removes and returns the first arrival at or after `start`; earlier ones (a timed-out
  /// sample's found arriving late) are dropped.
  func take(after start: ContinuousClock.Instant) -> ContinuousClock.Instant? {
    instants.withLock { list in
      list.removeAll { $0 < start }
      return list.isEmpty ? nil : list.removeFirst()
    }
  }
}
