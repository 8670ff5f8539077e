import AsyncHTTPClient
import Foundation
import Testing
import TestSupport
import ResolverWire
import NearbyTesting

/// Every kind of bad input gets its documented status and a message that says what is wrong;
/// none of them is a 500.
@Suite("Bad input")
struct BadInputTests {
  typealias Device = RegisteredDevice

  func register(_ server: ServerHarness) async throws -> Device {
    try await server.registerDevice()
  }

  func report(_ server: ServerHarness, _ device: Device, secret: String? = nil, body: String)
    async throws -> RawAnswer
  {
    try await rawRequest(
      .POST, server.url, path: "/v1/devices/\(device.id)/report",
      headers: [
        ResolverContract.apiKeyHeader: server.apiKey,
        ResolverContract.deviceSecretHeader: secret ?? device.secret,
      ], body: body)
  }

  @Test func malformedJSONIs400WithWhere() async throws {
    let server = try await ServerHarness.start()
    try await withShutdown(server) { server in
      let device = try await register(server)
      let answer = try await report(server, device, body: #"{"publish": [{"id": "#)
      #expect(answer.status == 400)
      #expect(answer.json["error"] == "bad_request")
      #expect(answer.json["message"]?.contains("JSON") == true)
      let wrongType = try await report(server, device, body: #"{"unpublish": "x"}"#)
      #expect(wrongType.status == 400)
      #expect(wrongType.json["message"]?.contains("unpublish") == true)
      let badID = try await report(server, device, body: #"{"unpublish": ["nope"]}"#)
      #expect(badID.status == 400)
      #expect(badID.json["message"] == "unpublish[0]: 'nope' is not a UUID")
    }
  }

  @Test func missingUnknownAndRevokedKeysAre401() async throws {
    let server = try await ServerHarness.start { $0.apiKeyCacheLifetime = .zero }
    try await withShutdown(server) { server in
      let missing = try await rawRequest(.POST, server.url, path: "/v1/devices")
      #expect(missing.status == 401)
      #expect(missing.json["message"]?.contains(ResolverContract.apiKeyHeader) == true)
      let unknown = try await rawRequest(
        .POST, server.url, path: "/v1/devices", headers: [ResolverContract.apiKeyHeader: "nk_nope"])
      #expect(unknown.status == 401)
      #expect(unknown.json["message"] == "unknown or revoked API key")
      let key = server.apiKey
      let id = try await server.storage.read { store in try store.apiKeys.apiKey(key)?.id }
      _ = try await server.storage.transaction { store in
        try store.apiKeys.revokeAPIKey(id: id ?? "", now: Date())
      }
      let revoked = try await rawRequest(
        .POST, server.url, path: "/v1/devices", headers: [ResolverContract.apiKeyHeader: key])
      #expect(revoked.status == 401)
    }
  }

  /// A wrong secret and an unknown device get the same answer (issue 16): without the secret
  /// nobody learns whether an id exists.
  @Test func wrongSecretAndUnknownDeviceAreTheSame404() async throws {
    let server = try await ServerHarness.start()
    try await withShutdown(server) { server in
      let device = try await register(server)
      let wrong = try await report(server, device, secret: "wrong", body: "{}")
      #expect(wrong.status == 404)
      #expect(
        wrong.json["message"]
          == "device \(device.id) is not registered, or the secret is not its secret")
      let missingSecret = try await rawRequest(
        .POST, server.url, path: "/v1/devices/\(device.id)/report",
        headers: [ResolverContract.apiKeyHeader: server.apiKey], body: "{}")
      #expect(missingSecret.status == 403)
      let ghost = Device(id: UUID().uuidString, secret: "x")
      let unknown = try await report(server, ghost, body: "{}")
      #expect(unknown.status == 404)
      #expect(
        unknown.json["message"]
          == "device \(ghost.id.lowercased()) is not registered, or the secret is not its secret")
    }
  }

  @Test func limitsAre422NamingTheLimit() async throws {
    let server = try await ServerHarness.start()
    try await withShutdown(server) { server in
      let device = try await register(server)
      let big = Data(count: 102_401).base64EncodedString()
      let content = try await report(
        server, device,
        body: #"{"publish":[{"id":"\#(UUID().uuidString)","message":{"content":"\#(big)"}}]}"#)
      #expect(content.status == 422)
      #expect(content.json["message"]?.contains("102400") == true)
      let longType = String(repeating: "t", count: 33)
      let type = try await report(
        server, device,
        body:
          #"{"publish":[{"id":"\#(UUID().uuidString)","message":{"content":"aGk=","type":"\#(longType)"}}]}"#
      )
      #expect(type.status == 422)
      #expect(type.json["message"]?.contains("32") == true)
      let ttl = try await report(
        server, device,
        body: #"{"subscribe":[{"id":"\#(UUID().uuidString)","strategy":{"ttl":90000}}]}"#)
      #expect(ttl.status == 400)
      #expect(ttl.json["message"]?.contains("86400") == true)
    }
  }

  @Test func anOversizedBodyIs413() async throws {
    let server = try await ServerHarness.start { $0.maximumBodyBytes = 1000 }
    try await withShutdown(server) { server in
      let device = try await register(server)
      let answer = try await report(
        server, device, body: #"{"unpublish":[],"pad":"\#(String(repeating: "x", count: 2000))"}"#)
      #expect(answer.status == 413)
      #expect(answer.json["message"]?.contains("1000") == true)
    }
  }

  @Test func tooManyRequestsIs429WithRetryAfter() async throws {
    // The rate is measured on a clock that stands still: nothing refills between requests,
    // however long they take.
    let server = try await ServerHarness.start {
      $0.requestsPerSecond = 0.5
      $0.burst = 2
      $0.clock = ManualClock()
    }
    try await withShutdown(server) { server in
      var statuses: [Int] = []
      var retryAfter: String?
      for _ in 0..<3 {
        let answer = try await rawRequest(
          .POST, server.url, path: "/v1/devices",
          headers: [ResolverContract.apiKeyHeader: server.apiKey])
        statuses.append(answer.status)
        retryAfter = answer.headers["retry-after"] ?? retryAfter
      }
      #expect(statuses == [201, 201, 429])
      #expect(retryAfter.flatMap(Int.init).map { $0 >= 1 } == true)
    }
  }

  @Test func aBadLastEventIDIs400() async throws {
    let server = try await ServerHarness.start()
    try await withShutdown(server) { server in
      let device = try await register(server)
      let answer = try await rawRequest(
        .GET, server.url, path: "/v1/devices/\(device.id)/events",
        headers: [
          ResolverContract.apiKeyHeader: server.apiKey,
          ResolverContract.deviceSecretHeader: device.secret,
          "Last-Event-ID": "yesterday",
        ])
      #expect(answer.status == 400)
      #expect(answer.json["message"]?.contains("Last-Event-ID") == true)
    }
  }

  /// A revoked key closes the event streams opened with it at their next read (a wake or
  /// the poll), not whenever the client goes away.
  @Test func revokingAKeyEndsItsEventStreams() async throws {
    let server = try await ServerHarness.start()
    try await withShutdown(server) { server in
      let device = try await register(server)
      let answer = Watched<RawAnswer?>(nil)
      let stream = Task {
        let ended = try await rawRequest(
          .GET, server.url, path: "/v1/devices/\(device.id)/events",
          headers: [
            ResolverContract.apiKeyHeader: server.apiKey,
            ResolverContract.deviceSecretHeader: device.secret,
          ])
        answer.withLock { $0 = ended }
      }
      defer { stream.cancel() }
      let opened = await eventually {
        let metrics = try? await rawRequest(
          .GET, server.url, path: "/metrics",
          headers: [ResolverContract.apiKeyHeader: server.apiKey])
        return metrics?.body.contains("nearby_event_streams_opened_total 1") == true
      }
      #expect(opened)
      let key = try await server.storage.read { store in try store.apiKeys.apiKey(server.apiKey)?.id
      }
      let revoked = try await server.storage.transaction { store in
        try store.apiKeys.revokeAPIKey(id: try #require(key), now: Date())
      }
      #expect(revoked)
      #expect(await answer.until { $0 != nil }, "the stream stayed open")
      #expect(answer.value?.status == 200)
    }
  }

  /// `/metrics` holds the whole server's counters: an admin key's by default (issue 29),
  /// anyone's with `--open-metrics`.
  @Test func healthNeedsNoKeyMetricsAnAdminKey() async throws {
    let server = try await ServerHarness.start()
    let health = try await rawRequest(.GET, server.url, path: "/healthz")
    #expect(health.status == 200)
    #expect(health.json["status"] == "ok")
    #expect(try await rawRequest(.GET, server.url, path: "/metrics").status == 401)
    let metrics = try await rawRequest(
      .GET, server.url, path: "/metrics", headers: [ResolverContract.apiKeyHeader: server.apiKey])
    #expect(metrics.status == 200)
    #expect(metrics.body.contains("nearby_http_requests_total"))
    await server.shutdown()
    let open = try await ServerHarness.start { $0.metricsRequireKey = false }
    let anyone = try await rawRequest(.GET, open.url, path: "/metrics")
    #expect(anyone.status == 200)
    await open.shutdown()
  }
}
