import Foundation
import Synchronization
import Testing
import TestSupport
import ResolverWire
import NearbyTesting

/// A connection that trickles nothing is closed after the idle timeout (slowloris), while an
/// event stream, an answer being sent, stays open past it.
@Suite("Idle connections")
struct IdleConnectionTests {
  /// Connects to 127.0.0.1:`port`, sends `text`, and waits (at most 10 s) for the server to
  /// close: the seconds it took, or nil if it did not.
  static func secondsUntilClosed(port: Int, sending text: String) async -> Double? {
    guard let connection = RawConnection(port: port) else { return nil }
    connection.send(text)
    return await connection.secondsUntilClosed(within: 10)
  }

  @Test func aConnectionThatSendsHalfARequestIsClosed() async throws {
    let server = try await ServerHarness.start { $0.idleTimeout = .milliseconds(500) }
    try await withShutdown(server) { server in
      let port = try #require(server.url.port)
      let closedAfter = await Self.secondsUntilClosed(
        port: port, sending: "POST /v1/devices HTTP/1.1\r\nHost: 127.0.0.1\r\n")
      // Closed within 10 s: by the 500 ms timeout, not the default 30 s.
      #expect(closedAfter != nil, "still open after 10 s")
      let idleAfter = await Self.secondsUntilClosed(port: port, sending: "")
      #expect(idleAfter != nil, "still open after 10 s")
    }
  }

  @Test func aHeadTrickledByteByByteIsCutOff() async throws {
    // Never idle for long (a byte every 200 ms), but the head is never done.
    let server = try await ServerHarness.start {
      $0.idleTimeout = .seconds(30)
      $0.requestHeadTimeout = .seconds(1)
    }
    try await withShutdown(server) { server in
      let port = try #require(server.url.port)
      let connection = try #require(RawConnection(port: port))
      connection.send("GET /healthz HTTP/1.1\r\nHost: x\r\n")
      var open = true
      for index in 0..<50 where open {
        try await Task.sleep(for: .milliseconds(200))
        connection.send("X-Slow-\(index): y\r\n")
        open = !connection.isClosed
      }
      // Cut off while trickling: by the 1 s head deadline, since the idle timeout (30 s)
      // never came near.
      #expect(!open, "still open after 10 s of trickling")
      // A request sent whole, after an answer, is served as ever.
      let answer = try await rawRequest(.GET, server.url, path: "/healthz")
      #expect(answer.status == 200)
    }
  }

  @Test func anEventStreamOutlivesTheIdleTimeout() async throws {
    let server = try await ServerHarness.start {
      $0.idleTimeout = .milliseconds(300)
      $0.requestHeadTimeout = .milliseconds(300)
    }
    try await withShutdown(server) { server in
      let registered = try await rawRequest(
        .POST, server.url, path: "/v1/devices",
        headers: [ResolverContract.apiKeyHeader: server.apiKey])
      let id = try #require(registered.json["id"])
      let secret = try #require(registered.json["secret"])
      let port = try #require(server.url.port)
      let connection = try #require(RawConnection(port: port))
      connection.send(
        "GET /v1/devices/\(id)/events HTTP/1.1\r\nHost: 127.0.0.1\r\n"
          + "\(ResolverContract.apiKeyHeader): \(server.apiKey)\r\n"
          + "\(ResolverContract.deviceSecretHeader): \(secret)\r\n\r\n")
      // The stream's answer has begun (how soon depends on the machine's load, which is
      // not what this test is about)...
      let head = await connection.receive(within: 10)
      #expect(head?.hasPrefix("HTTP/1.1 200") == true, "the stream's head: \(head ?? "none")")
      // ...then over six idle timeouts pass with nothing to send: the stream is still open.
      let started = ContinuousClock.now
      let closedAfter = await connection.secondsUntilClosed(within: 2)
      #expect(closedAfter == nil, "the stream was closed after \(closedAfter ?? 0) s")
      // nil is also a failed read (a reset): the wait must have lasted.
      let waited = ContinuousClock.now - started
      #expect(waited >= .milliseconds(1900), "the read ended after \(waited), not by its timeout")
    }
  }
}
