import TestSupport
import Logging
import Hummingbird
import AsyncHTTPClient
import Foundation
import NIOCore
import NIOHTTP1
import Testing
import ResolverWire
import NearbyTesting

/// A raw HTTP answer: status, headers, body as text and as JSON.
struct RawAnswer: Sendable {
  var status: Int
  var headers: [String: String]
  var body: String

  var json: [String: String] {
    (try? JSONSerialization.jsonObject(with: Data(body.utf8)) as? [String: String]) ?? [:]
  }
}

/// Sends one request as written (tests of bad input bypass the generated client).
func rawRequest(
  _ method: HTTPMethod, _ url: URL, path: String, headers: [String: String] = [:],
  body: String? = nil
) async throws -> RawAnswer {
  var request = HTTPClientRequest(url: url.absoluteString + path)
  request.method = method
  for (name, value) in headers { request.headers.add(name: name, value: value) }
  if let body {
    request.headers.add(name: "Content-Type", value: "application/json")
    request.body = .bytes(ByteBuffer(string: body))
  }
  let response = try await HTTPClient.shared.execute(request, timeout: .seconds(10))
  let bytes = try await response.body.collect(upTo: 1 << 20)
  var headers: [String: String] = [:]
  for header in response.headers { headers[header.name.lowercased()] = header.value }
  return RawAnswer(
    status: Int(response.status.code), headers: headers, body: String(buffer: bytes))
}

/// A device registered over HTTP: its id and secret.
struct RegisteredDevice: Sendable {
  var id: String
  var secret: String
}

extension ServerHarness {
  /// Registers a device with `key`, by default the harness's (expecting 201).
  func registerDevice(key: String? = nil) async throws -> RegisteredDevice {
    let answer = try await rawRequest(
      .POST, url, path: "/v1/devices", headers: [ResolverContract.apiKeyHeader: key ?? apiKey])
    #expect(answer.status == 201)
    return RegisteredDevice(
      id: try #require(answer.json["id"]), secret: try #require(answer.json["secret"]))
  }
}

/// A Hummingbird server on a free loopback port with `router` (a server that misbehaves on
/// purpose), its URL, and the task that runs it (cancel it to stop).
func serveOnLoopback(_ router: Router<BasicRequestContext>) async throws -> (
  URL, Task<Void, any Error>
) {
  let port = Watched(0)
  let app = Application(
    router: router, configuration: .init(address: .hostname("127.0.0.1", port: 0)),
    onServerRunning: { channel in port.withLock { $0 = channel.localAddress?.port ?? 0 } },
    logger: Logger(label: "test.loopback"))
  let running = Task { try await app.runService() }
  #expect(await port.until { $0 != 0 })
  return (try #require(URL(string: "http://127.0.0.1:\(port.value)")), running)
}
