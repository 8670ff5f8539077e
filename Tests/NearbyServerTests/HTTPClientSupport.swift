import AsyncHTTPClient
import Foundation
import NIOCore
import NIOHTTP1

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
