import AsyncHTTPClient
import Foundation
import NIOCore
import NearbyServer
import Synchronization
import Testing
import TestSupport
import ResolverWire
import NearbyTesting

/// Issue 29, finding 3: a client that holds no credentials holds nothing open for long, and
/// nobody holds more than their share of connections and event streams.
@Suite("Slow and greedy clients")
struct SlowClientTests {
  func withServer(
    configure: @escaping (inout ResolverServerConfiguration) -> Void,
    _ body: (ServerHarness) async throws -> Void
  ) async throws {
    let server = try await ServerHarness.start(configure: configure)
    do { try await body(server) } catch {
      await server.shutdown()
      throw error
    }
    await server.shutdown()
  }

  /// A large Content-Length and a byte every 200 ms: never idle, never done. Cut off at the
  /// body deadline, on the console's sign-in (read before any credential) as on the API.
  @Test(arguments: ["/console/sign-in", "/v1/devices/x/report"])
  func aBodyTrickledByteByByteIsCutOff(_ path: String) async throws {
    try await withServer(configure: {
      $0.idleTimeout = .seconds(30)
      $0.requestBodyTimeout = .seconds(1)
    }) { server in
      let port = try #require(server.url.port)
      let connection = try #require(RawConnection(port: port))
      connection.send(
        "POST \(path) HTTP/1.1\r\nHost: x\r\n\(ResolverContract.apiKeyHeader): \(server.apiKey)\r\n"
          + "\(ResolverContract.deviceSecretHeader): s\r\nContent-Type: application/x-www-form-urlencoded\r\n"
          + "Content-Length: 60000\r\n\r\n")
      var open = true
      for _ in 0..<50 where open {
        try await Task.sleep(for: .milliseconds(200))
        connection.send("a")
        open = !connection.isClosed
      }
      // Cut off while trickling: by the 1 s body deadline, since the idle timeout (30 s)
      // never came near.
      #expect(!open, "still open after 10 s of trickling")
      #expect(try await rawRequest(.GET, server.url, path: "/healthz").status == 200)
    }
  }

  /// Issue 39: the console's sign-in form is read before any credential (the key is in it),
  /// so a body trickled to it has the unauthenticated deadline (10 s by default), as whoever
  /// has no key gets on the API (answered 401 at once, the rest of the body cut 10 s later).
  /// It had the 30 s of an authenticated body: open after 27 s at 0.5 B/s.
  @Test func aBodyTrickledToSignInIsCutOffAtTheUnauthenticatedDeadline() async throws {
    try await withServer(configure: { _ in }) { server in
      let port = try #require(server.url.port)
      let connection = try #require(RawConnection(port: port))
      connection.send(
        "POST /console/sign-in HTTP/1.1\r\nHost: x\r\n"
          + "Content-Type: application/x-www-form-urlencoded\r\nContent-Length: 1000\r\n\r\n")
      let trickle = Task {
        while !Task.isCancelled, !connection.isClosed {
          connection.send("a")
          try? await Task.sleep(for: .seconds(2))
        }
      }
      let closedAfter = await connection.secondsUntilClosed(within: 20)
      trickle.cancel()
      await trickle.value
      // Closed within 20 s of a byte every 2 s: by the 10 s deadline, not the 30 s of a key
      // holder's body (nor the idle timeout, 30 s, which the trickle holds off).
      #expect(closedAfter != nil, "still open after 20 s of trickling")
      #expect(try await rawRequest(.GET, server.url, path: "/healthz").status == 200)
    }
  }

  /// A key holder's body keeps the longer deadline: a report trickled past the unauthenticated
  /// deadline is answered once it is whole.
  @Test func anAuthenticatedBodyOutlivesTheUnauthenticatedDeadline() async throws {
    try await withServer(configure: {
      // Not shorter: the key is checked after the head arrives, which took a second with 100
      // tests running on two cores.
      $0.unauthenticatedBodyTimeout = .seconds(3)
      $0.requestBodyTimeout = .seconds(30)
    }) { server in
      let device = try await server.registerDevice()
      let port = try #require(server.url.port)
      let connection = try #require(RawConnection(port: port))
      let body = "{" + String(repeating: " ", count: 25) + "}"
      connection.send(
        "POST /v1/devices/\(device.id)/report HTTP/1.1\r\nHost: x\r\n"
          + "\(ResolverContract.apiKeyHeader): \(server.apiKey)\r\n"
          + "\(ResolverContract.deviceSecretHeader): \(device.secret)\r\n"
          + "Content-Type: application/json\r\nContent-Length: \(body.utf8.count)\r\n\r\n")
      // 5.4 s, a byte every 200 ms: past the unauthenticated deadline.
      for character in body {
        try await Task.sleep(for: .milliseconds(200))
        connection.send(String(character))
      }
      let answer = await connection.receiveAnswer(within: 10)
      #expect(answer?.hasPrefix("HTTP/1.1 200") == true, "\(String(describing: answer))")
    }
  }

  @Test func anAddressHoldsAtMostItsShareOfConnections() async throws {
    try await withServer(configure: {
      $0.maximumConnectionsPerAddress = 3
      $0.requestHeadTimeout = .seconds(30)
    }) { server in
      let port = try #require(server.url.port)
      // Each answered once (so the server has counted it) and kept open.
      var held: [RawConnection] = []
      for _ in 0..<3 {
        let connection = try #require(RawConnection(port: port))
        connection.send("GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n")
        let answer = await connection.receive(within: 5)
        #expect(answer?.hasPrefix("HTTP/1.1 200") == true)
        held.append(connection)
      }
      // The fourth is closed at once (long before the idle timeout).
      let fourth = try #require(RawConnection(port: port))
      let closedAfter = await fourth.secondsUntilClosed(within: 5)
      #expect(closedAfter.map { $0 < 4 } == true, "\(String(describing: closedAfter))")
      for connection in held { #expect(!connection.isClosed) }
      // One closed gives its place back.
      held.removeFirst()
      #expect(try await answersWithinTheBound(server))
      withExtendedLifetime(held) {}
    }
  }

  /// Whether the server answers `/healthz` (asked again until it does, for at most the
  /// default bound).
  func answersWithinTheBound(_ server: ServerHarness) async throws -> Bool {
    await eventually {
      (try? await rawRequest(.GET, server.url, path: "/healthz").status) == 200
    }
  }

  @Test func eventStreamsAreCappedPerKeyAndPerAddress() async throws {
    try await withServer(configure: {
      $0.maximumEventStreamsPerKey = 2
      $0.maximumEventStreamsPerAddress = 3
    }) { server in
      let other = try await server.storage.transaction { store in
        try store.apiKeys.createAPIKey(project: "b", role: .client, label: "", now: Date())
      }.key
      func open(_ key: String) async throws -> HTTPClientResponse {
        let device = try await rawRequest(
          .POST, server.url, path: "/v1/devices", headers: [ResolverContract.apiKeyHeader: key])
        let id = try #require(device.json["id"])
        let secret = try #require(device.json["secret"])
        var request = HTTPClientRequest(url: server.url.absoluteString + "/v1/devices/\(id)/events")
        request.headers.add(name: ResolverContract.apiKeyHeader, value: key)
        request.headers.add(name: ResolverContract.deviceSecretHeader, value: secret)
        return try await HTTPClient.shared.execute(request, timeout: .seconds(30))
      }
      var streams: [HTTPClientResponse] = []
      streams.append(try await open(server.apiKey))
      streams.append(try await open(server.apiKey))
      #expect(streams.allSatisfy { $0.status.code == 200 })
      let overKey = try await open(server.apiKey)
      #expect(overKey.status.code == 429)
      let keyMessage = String(buffer: try await overKey.body.collect(upTo: 4096))
      #expect(keyMessage.contains("event streams of this API key"), "\(keyMessage)")
      // Another key from the same address: one more fits, then the address is full.
      streams.append(try await open(other))
      #expect(streams.last?.status.code == 200)
      let overAddress = try await open(other)
      #expect(overAddress.status.code == 429)
      let addressMessage = String(buffer: try await overAddress.body.collect(upTo: 4096))
      #expect(addressMessage.contains("event streams from this address"), "\(addressMessage)")
      withExtendedLifetime(streams) {}
    }
  }
}
