import ResolverWire
import CommandLineSupport
import AsyncHTTPClient
import Foundation
import NIOCore
import NIOHTTP1

/// The simulated devices of the server benchmark: registered over HTTP, each with a
/// publication and a subscription, and their current tokens.
struct BenchFleet {
  struct Device {
    var id: String
    var secret: String
    var token: String
  }

  var devices: [Device]

  static func make(base: String, key: String, devices count: Int, progress: (String) -> Void)
    async throws -> BenchFleet
  {
    var devices: [Device] = []
    for index in 0..<count {
      let registered = try await post(base + "/v1/devices", key: key, secret: nil, body: nil)
      guard let id = registered["id"] as? String, let secret = registered["secret"] as? String
      else { throw CommandFailure("registration answered \(registered)") }
      let text = Data("device \(index)".utf8).base64EncodedString()
      let body = """
        {"publish": [{"id": "\(UUID().uuidString)", "message": {"content": "\(text)", "type": "bench"}}],
         "subscribe": [{"id": "\(UUID().uuidString)", "type": "bench"}]}
        """
      let answer = try await post(
        base + "/v1/devices/\(id)/report", key: key, secret: secret, body: body)
      guard let directives = answer["directives"] as? [String: Any],
        let token = directives["token"] as? String
      else { throw CommandFailure("report answered \(answer)") }
      devices.append(Device(id: id, secret: secret, token: token))
      if (index + 1) % 250 == 0 { progress("\(index + 1) devices ready") }
    }
    return BenchFleet(devices: devices)
  }

  /// The report body of device `index`: sightings of the next `sightings` devices.
  func reportBody(of index: Int, sightings: Int, time: String) -> String {
    let heard = (1...max(sightings, 1)).prefix(sightings).map {
      devices[(index + $0) % devices.count].token
    }
    let items = heard.map { #"{"token":"\#($0)","medium":"ble","rssi":-60,"time":"\#(time)"}"# }
    return #"{"sightings":[\#(items.joined(separator: ","))]}"#
  }

  /// Sends every device's report once, `concurrency` at a time: the devices hear each other
  /// before wrk starts, as in the steady state the benchmark measures (a sighting made anew
  /// matches handles; one refreshed while fresh does not).
  func warmUp(base: String, key: String, sightings: Int, concurrency: Int = 16) async throws {
    let time = ISO8601DateFormatter().string(from: Date())
    try await withThrowingTaskGroup(of: Void.self) { group in
      for (index, device) in devices.enumerated() {
        if index >= concurrency { try await group.next() }
        let body = reportBody(of: index, sightings: sightings, time: time)
        group.addTask {
          _ = try await Self.post(
            base + "/v1/devices/\(device.id)/report", key: key, secret: device.secret, body: body)
        }
      }
      try await group.waitForAll()
    }
  }

  /// A wrk script: each request is one device's report with sightings of its neighbours
  /// (the next `sightings` devices in the fleet), devices taken in turn; wrk's threads start
  /// at different places in the fleet, so no two send the same device's report at once.
  /// Each report says it was heard now (the server ignores sightings heard more than 30 s
  /// before they arrive): the time is put in as the request is made.
  func luaScript(key: String, sightings: Int) -> String {
    var lines = ["local paths = {}", "local bodies = {}", "local headers = {}"]
    for (index, device) in devices.enumerated() {
      let body = reportBody(of: index, sightings: sightings, time: "@TIME@")
      lines.append("paths[\(index + 1)] = \"/v1/devices/\(device.id)/report\"")
      lines.append("bodies[\(index + 1)] = '\(body)'")
      lines.append(
        "headers[\(index + 1)] = {[\"Content-Type\"] = \"application/json\", "
          + "[\"X-Nearby-API-Key\"] = \"\(key)\", [\"X-Nearby-Device-Secret\"] = \"\(device.secret)\"}"
      )
    }
    lines.append("local requests = paths")
    lines += [
      "counter = 0",
      "local threads = 0",
      "setup = function(thread)",
      "  thread:set(\"counter\", math.floor(threads * #requests * 0.618) % #requests)",
      "  threads = threads + 1",
      "end",
      "request = function()",
      "  counter = counter % #requests + 1",
      "  local body = string.gsub(bodies[counter], \"@TIME@\", os.date(\"!%Y-%m-%dT%H:%M:%SZ\"))",
      "  return wrk.format(\"POST\", paths[counter], headers[counter], body)",
      "end",
      "local failures = 0",
      "response = function(status, headers, body)",
      "  if status ~= 200 then failures = failures + 1 end",
      "end",
      "done = function(summary, latency, requests)",
      "  io.write(string.format(\"non-200: %d\\n\", summary.errors.status))",
      "end",
    ]
    return lines.joined(separator: "\n") + "\n"
  }

  /// POSTs `body` (JSON) with the key and, if given, the device secret; the answer's JSON.
  /// - Throws: ``CommandFailure`` for an answer that is not 2xx.
  static func post(_ url: String, key: String, secret: String?, body: String?)
    async throws -> [String: Any]
  {
    var request = HTTPClientRequest(url: url)
    request.method = .POST
    request.headers.add(name: ResolverContract.apiKeyHeader, value: key)
    if let secret { request.headers.add(name: ResolverContract.deviceSecretHeader, value: secret) }
    if let body {
      request.headers.add(name: "Content-Type", value: "application/json")
      request.body = .bytes(ByteBuffer(string: body))
    }
    let response = try await HTTPClient.shared.execute(request, timeout: .seconds(30))
    let bytes = try await response.body.collect(upTo: 1 << 20)
    guard (200..<300).contains(response.status.code) else {
      throw CommandFailure("\(url) answered \(response.status.code): \(String(buffer: bytes))")
    }
    return (try JSONSerialization.jsonObject(with: Data(buffer: bytes)) as? [String: Any]) ?? [:]
  }
}
