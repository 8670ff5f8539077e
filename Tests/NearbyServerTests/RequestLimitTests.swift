import Foundation
import NIOHTTP1
import NearbyTesting
import ServerStorage
import Testing
import TestSupport

@testable import NearbyServer
import ResolverWire

/// Work a client without a valid key can make the server do, and the rates a client with one
/// may use (issue 16): the key is checked before the body is read, refused keys are limited
/// per address, devices have their own rate, `/metrics` can need an admin key, and past the
/// connection limit new connections wait.
@Suite("Request limits")
struct RequestLimitTests {
  @Test func theKeyIsCheckedBeforeTheBodyIsRead() async throws {
    let server = try await ServerHarness.start()
    try await withShutdown(server) { server in
      let port = try #require(server.url.port)
      let connection = try #require(RawConnection(port: port))
      // A body that never ends, with a made-up key: the answer comes at once (the server does
      // not wait for, or buffer, the body of a caller it does not know).
      connection.send(
        "POST /v1/devices/\(UUID().uuidString)/report HTTP/1.1\r\nHost: x\r\n"
          + "\(ResolverContract.apiKeyHeader): nk_madeup\r\nContent-Type: application/json\r\n"
          + "Transfer-Encoding: chunked\r\n\r\n100\r\n{\"sightings\": [")
      let answer = await connection.receive(within: 5)
      #expect(answer?.hasPrefix("HTTP/1.1 401") == true, "\(answer ?? "nothing within 5 s")")
    }
  }

  @Test func anAddressThatKeepsGuessingKeysIsCutOff() async throws {
    // The default rate and burst, on a clock that moves only when the test says.
    let clock = ManualClock()
    let server = try await ServerHarness.start { $0.clock = clock }
    try await withShutdown(server) { server in
      var statuses: [Int] = []
      for index in 0..<25 {
        let answer = try await rawRequest(
          .POST, server.url, path: "/v1/devices",
          headers: [ResolverContract.apiKeyHeader: "nk_guess\(index)"])
        statuses.append(answer.status)
      }
      // The burst (20) of refusals, then 429 with Retry-After.
      #expect(statuses.prefix(20).allSatisfy { $0 == 401 }, "\(statuses)")
      #expect(statuses.suffix(5).allSatisfy { $0 == 429 }, "\(statuses)")
      let limited = try await rawRequest(
        .POST, server.url, path: "/v1/devices", headers: [ResolverContract.apiKeyHeader: "nk_more"])
      #expect(limited.headers["retry-after"] != nil)
      #expect(limited.json["message"]?.contains("refused API keys from this address") == true)
      // A second later (5 a second) five more refusals are allowed, then 429 again.
      clock.advance(by: .seconds(1))
      var after: [Int] = []
      for index in 0..<6 {
        after.append(
          try await rawRequest(
            .POST, server.url, path: "/v1/devices",
            headers: [ResolverContract.apiKeyHeader: "nk_later\(index)"]
          ).status)
      }
      #expect(after == [401, 401, 401, 401, 401, 429], "\(after)")
    }
  }

  @Test func behindATrustedProxyTheForwardedAddressCounts() async throws {
    let clock = ManualClock()
    let server = try await ServerHarness.start {
      $0.clock = clock
      $0.trustedProxies = ["127.0.0.1"]
    }
    try await withShutdown(server) { server throws in
      func guess(from address: String) async throws -> Int {
        try await rawRequest(
          .POST, server.url, path: "/v1/devices",
          headers: [
            ResolverContract.apiKeyHeader: "nk_guess",
            "X-Forwarded-For": "198.51.100.9, \(address)",
          ]
        ).status
      }
      for _ in 0..<20 { #expect(try await guess(from: "203.0.113.1") == 401) }
      #expect(try await guess(from: "203.0.113.1") == 429)
      // Another client behind the same proxy has its own budget.
      #expect(try await guess(from: "203.0.113.2") == 401)
      // What a client writes left of its proxy's entry does not count.
      #expect(
        ClientAddressMiddleware.client(
          peer: "127.0.0.1", forwardedFor: ["10.0.0.1, 203.0.113.1"], trusted: ["127.0.0.1"])
          == "203.0.113.1")
      #expect(
        ClientAddressMiddleware.client(
          peer: "192.0.2.7", forwardedFor: ["203.0.113.1"], trusted: ["127.0.0.1"]) == "192.0.2.7")
    }
  }

  @Test func aDeviceHasARateOfItsOwn() async throws {
    let clock = ManualClock()
    let server = try await ServerHarness.start {
      $0.requestsPerSecondPerDevice = 0.5
      $0.burstPerDevice = 3
      $0.clock = clock
    }
    try await withShutdown(server) { server in
      func register() async throws -> (String, String) {
        let answer = try await rawRequest(
          .POST, server.url, path: "/v1/devices",
          headers: [ResolverContract.apiKeyHeader: server.apiKey])
        return (try #require(answer.json["id"]), try #require(answer.json["secret"]))
      }
      let (busy, busySecret) = try await register()
      let (quiet, quietSecret) = try await register()
      func report(_ id: String, _ secret: String) async throws -> RawAnswer {
        try await rawRequest(
          .POST, server.url, path: "/v1/devices/\(id)/report",
          headers: [
            ResolverContract.apiKeyHeader: server.apiKey,
            ResolverContract.deviceSecretHeader: secret,
          ],
          body: "{}")
      }
      var statuses: [Int] = []
      for _ in 0..<5 { statuses.append(try await report(busy, busySecret).status) }
      #expect(statuses == [200, 200, 200, 429, 429])
      let limited = try await report(busy, busySecret)
      #expect(limited.json["message"]?.contains("this device") == true, "\(limited.body)")
      // Another device of the same key is not held back.
      #expect(try await report(quiet, quietSecret).status == 200)
      // Two seconds later (half a request a second) the busy device may report once more.
      clock.advance(by: .seconds(2))
      #expect(try await report(busy, busySecret).status == 200)
      #expect(try await report(busy, busySecret).status == 429)
    }
  }

  @Test func metricsNeedAnAdminKey() async throws {
    let server = try await ServerHarness.start()
    try await withShutdown(server) { server in
      let client = try await server.storage.transaction { store in
        try store.apiKeys.createAPIKey(project: "test", role: .client, label: "", now: Date())
      }.key
      #expect(try await rawRequest(.GET, server.url, path: "/metrics").status == 401)
      let byClient = try await rawRequest(
        .GET, server.url, path: "/metrics", headers: [ResolverContract.apiKeyHeader: client])
      #expect(byClient.status == 403)
      let scraped = try await rawRequest(
        .GET, server.url, path: "/metrics", headers: ["Authorization": "Bearer \(server.apiKey)"])
      #expect(scraped.status == 200)
      #expect(scraped.body.contains("nearby_"), "\(scraped.body.prefix(200))")
      // /healthz stays open.
      #expect(try await rawRequest(.GET, server.url, path: "/healthz").status == 200)
    }
  }

  @Test func pastTheConnectionLimitNewConnectionsWait() async throws {
    let server = try await ServerHarness.start { $0.maximumConnections = 2 }
    try await withShutdown(server) { server in
      let port = try #require(server.url.port)
      var first = RawConnection(port: port)
      let second = try #require(RawConnection(port: port))
      // Both held: make sure the server has accepted them.
      first?.send("GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n")
      second.send("GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n")
      #expect(await first?.receive(within: 5)?.hasPrefix("HTTP/1.1 200") == true)
      #expect(await second.receive(within: 5)?.hasPrefix("HTTP/1.1 200") == true)
      let third = try #require(RawConnection(port: port))
      third.send("GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n")
      #expect(await third.receive(within: 1) == nil)
      // One goes: the waiting one is served.
      first = nil
      #expect(await third.receive(within: 5)?.hasPrefix("HTTP/1.1 200") == true)
    }
  }
}
