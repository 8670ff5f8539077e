import AsyncHTTPClient
import Foundation
import NIOCore
import NIOHTTP1
import ResolverWire
import ServerStorage
import Testing
import TestSupport
import NearbyTesting

/// The phone's page under /web: its files with their headers (a CSP that allows only our own
/// files and calls), revalidation and gzip; and /web/key, which lets a page use a client key
/// only.
@Suite("The web page's routes")
struct WebClientTests {
  @Test func theFilesAreServedWithAStrictPolicy() async throws {
    let server = try await ServerHarness.start()
    try await withShutdown(server) { server in
      let page = try await rawRequest(.GET, server.url, path: "/web")
      #expect(page.status == 200)
      #expect(page.headers["content-type"] == "text/html; charset=utf-8")
      #expect(page.body.contains(#"data-testid="start""#))
      let policy = try #require(page.headers["content-security-policy"])
      #expect(policy.contains("default-src 'none'"))
      #expect(policy.contains("script-src 'self' 'wasm-unsafe-eval'"))
      #expect(policy.contains("connect-src 'self'"))
      #expect(!policy.contains("unsafe-inline") && !policy.contains("'unsafe-eval'"))
      #expect(page.headers["referrer-policy"] == "no-referrer")
      #expect(page.headers["x-content-type-options"] == "nosniff")
      #expect(try await rawRequest(.GET, server.url, path: "/web/").status == 200)

      let types = [
        "app.js": "text/javascript; charset=utf-8", "worklet.js": "text/javascript; charset=utf-8",
        "style.css": "text/css; charset=utf-8", "modem.wasm": "application/wasm",
      ]
      for (name, type) in types {
        let file = try await plainGet(server.url, path: "/web/\(name)")
        #expect(file.status == 200, "\(name)")
        #expect(file.headers["content-type"] == type, "\(name)")
        #expect(file.headers["content-encoding"] == nil, "\(name): gzip unasked")
        #expect(file.headers["content-security-policy"] == policy, "\(name)")
      }
      let wasm = try await plainGet(server.url, path: "/web/modem.wasm")
      #expect(wasm.body.hasPrefix("\0asm"), "the modem is WebAssembly")
      let script = try await rawRequest(.GET, server.url, path: "/web/app.js")
      #expect(script.body.contains("/v1/devices"))
      #expect(try await rawRequest(.GET, server.url, path: "/web/secret.txt").status == 404)
      #expect(try await rawRequest(.GET, server.url, path: "/web/../v1/devices").status != 200)
    }
  }

  @Test func aPhoneRevalidatesAndGetsGzip() async throws {
    let server = try await ServerHarness.start()
    try await withShutdown(server) { server in
      let plain = try await plainGet(server.url, path: "/web/modem.wasm")
      let tag = try #require(plain.headers["etag"])
      #expect(plain.headers["cache-control"] == "no-cache")
      let again = try await rawRequest(
        .GET, server.url, path: "/web/modem.wasm", headers: ["If-None-Match": tag])
      #expect(again.status == 304)
      #expect(again.body.isEmpty)
      let other = try await rawRequest(
        .GET, server.url, path: "/web/modem.wasm", headers: ["If-None-Match": "\"0\""])
      #expect(other.status == 200)
      let packed = try await plainGet(
        server.url, path: "/web/modem.wasm", headers: ["Accept-Encoding": "gzip, br"])
      #expect(packed.headers["content-encoding"] == "gzip")
      #expect(packed.headers["vary"] == "Accept-Encoding")
      let packedLength = try #require(packed.headers["content-length"].flatMap { Int($0) })
      let plainLength = try #require(plain.headers["content-length"].flatMap { Int($0) })
      #expect(packedLength < plainLength)
    }
  }

  @Test func aPageMayUseAClientKeyOnly() async throws {
    let server = try await ServerHarness.start()
    try await withShutdown(server) { server in
      let (client, other) = try await server.storage.transaction { store in
        (
          try store.apiKeys.createAPIKey(
            project: "test", role: .client, label: "phones", now: Date()),
          try store.apiKeys.createAPIKey(
            project: "elsewhere", role: .client, label: "", now: Date())
        )
      }
      func ask(_ key: String?) async throws -> RawAnswer {
        try await rawRequest(
          .GET, server.url, path: "/web/key",
          headers: key.map { [ResolverContract.apiKeyHeader: $0] } ?? [:])
      }
      let allowed = try await ask(client.key)
      #expect(allowed.status == 200)
      #expect(allowed.json == ["project": "test", "role": "client"])
      #expect(allowed.headers["cache-control"] == "no-store")
      #expect(try await ask(other.key).json["project"] == "elsewhere")

      let admin = try await ask(server.apiKey)
      #expect(admin.status == 403)
      #expect(admin.json["error"] == "forbidden")
      #expect(admin.json["message"]?.contains("--role client") == true, "\(admin.body)")

      let missing = try await ask(nil)
      #expect(missing.status == 401)
      #expect(missing.json["error"] == "unauthorized")
      #expect(try await ask("nk_" + String(repeating: "x", count: 43)).status == 401)
      #expect(try await ask(String(repeating: "k", count: 4000)).status == 401)

      _ = try await server.storage.transaction { store in
        try store.apiKeys.revokeAPIKey(id: client.record.id, now: Date())
      }
      // The key cache keeps an active key for its lifetime; past it the key is refused.
      let refused = try await eventually(timeout: .seconds(10), interval: .milliseconds(200)) {
        try await ask(client.key).status == 401
      }
      #expect(refused, "a revoked key is refused")
    }
  }
}

/// One GET with a client that neither asks for nor undoes compression (the shared client
/// does both), so that the answer's encoding and length are the server's.
func plainGet(_ url: URL, path: String, headers: [String: String] = [:]) async throws
  -> RawAnswer
{
  let client = HTTPClient(eventLoopGroup: HTTPClient.defaultEventLoopGroup)
  do {
    var request = HTTPClientRequest(url: url.absoluteString + path)
    for (name, value) in headers { request.headers.add(name: name, value: value) }
    let response = try await client.execute(request, timeout: .seconds(10))
    let bytes = try await response.body.collect(upTo: 1 << 20)
    var fields: [String: String] = [:]
    for header in response.headers { fields[header.name.lowercased()] = header.value }
    try await client.shutdown()
    return RawAnswer(
      status: Int(response.status.code), headers: fields, body: String(buffer: bytes))
  } catch {
    try? await client.shutdown()
    throw error
  }
}
