import AsyncHTTPClient
import Foundation
import NIOCore
import NearbyServer
import ServerStorage
import Synchronization
import TestSupport
import Testing
import ResolverWire

/// Issue 29: a console session ends when its operator signs out or leaves it idle; a form
/// too large is a 413; one project's live views and figures are its own.
@Suite("Console sessions and tenants")
struct ConsoleTenantTests {
  typealias Engine = ConsoleHarness.Engine

  /// Finding 5: after sign-out the old cookie opens nothing, on this instance or another.
  @Test(.requires(.postgres), arguments: Engine.allCases)
  func signingOutEndsTheSession(_ engine: Engine) async throws {
    try await ConsoleHarness.with(engine) { server in
      let (cookie, csrf) = try await server.adminSession()
      // A second session of the same key lives on.
      let (other, _) = try await server.adminSession()
      let out = try await server.request(
        .POST, "/console/sign-out", cookie: cookie, form: ["csrf": csrf])
      #expect(out.status == 303)
      let replayed = try await server.request(.GET, "/console/beacons", cookie: cookie)
      #expect(replayed.status == 303)
      #expect(replayed.header("location") == "/console/sign-in")
      #expect(try await server.request(.GET, "/console", cookie: other).status == 200)
    }
  }

  /// Finding 5: a session unused for the idle timeout ends; one in use lives on.
  @Test(.requires(.postgres), arguments: Engine.allCases)
  func anIdleSessionEnds(_ engine: Engine) async throws {
    let offset = Mutex<TimeInterval>(0)
    try await ConsoleHarness.with(
      engine, configure: { $0.console.sessionIdleTimeout = .seconds(600) },
      now: { Date().addingTimeInterval(offset.withLock { $0 }) }
    ) { server in
      let (idle, _) = try await server.adminSession()
      let (busy, _) = try await server.adminSession()
      for minutes in stride(from: 5.0, through: 15, by: 5) {
        offset.withLock { $0 = minutes * 60 }
        #expect(try await server.request(.GET, "/console", cookie: busy).status == 200)
      }
      let ended = try await server.request(.GET, "/console", cookie: idle)
      #expect(ended.status == 303)
      #expect(ended.header("location") == "/console/sign-in")
    }
  }

  /// Finding 8: a form over 64 KiB, signing in or signed in, is a 413, not a 500.
  @Test(.requires(.postgres), arguments: Engine.allCases)
  func aFormOverTheLimitIs413(_ engine: Engine) async throws {
    try await ConsoleHarness.with(engine) { server in
      let page = try await server.request(.GET, "/console/sign-in")
      let preCookie = try #require(page.cookie("nearby_console_sign_in"))
      let big = String(repeating: "a", count: 70_000)
      let signIn = try await server.request(
        .POST, "/console/sign-in", cookie: preCookie,
        form: ["csrf": try #require(page.csrf), "key": big])
      #expect(signIn.status == 413, "\(signIn.body.prefix(300))")
      #expect(signIn.body.contains("64 KiB"))
      let (cookie, csrf) = try await server.adminSession()
      let keys = try await server.request(
        .POST, "/console/keys", cookie: cookie, form: ["csrf": csrf, "label": big])
      #expect(keys.status == 413)
      // Without a session the body is not read at all: sent to sign in.
      let anonymous = try await server.request(
        .POST, "/console/keys", form: ["csrf": csrf, "label": big])
      #expect(anonymous.status == 303)
    }
  }

  /// Finding 4: a session at its cap of live views is refused (429); other views stay open.
  @Test(.requires(.postgres), arguments: Engine.allCases)
  func liveViewsAreCappedWithoutClosingOthers(_ engine: Engine) async throws {
    try await ConsoleHarness.with(
      engine,
      configure: {
        $0.console.liveViewsPerSession = 1
        $0.console.liveViewsPerProject = 2
      }
    ) { server in
      func open(_ cookie: String) async throws -> HTTPClientResponse {
        var request = HTTPClientRequest(url: server.base + "/console/live/events")
        request.headers.add(name: "Cookie", value: cookie)
        return try await ConsoleHarness.client.execute(request, timeout: .seconds(30))
      }
      let (first, _) = try await server.adminSession()
      let (second, _) = try await server.adminSession()
      let (third, _) = try await server.adminSession()
      let kept = try await open(first)
      #expect(kept.status.code == 200)
      #expect(try await open(first).status.code == 429)
      #expect(try await open(second).status.code == 200)
      #expect(try await open(third).status.code == 429)  // the project's cap
      // The first view still streams: its opening comment arrives.
      var iterator = kept.body.makeAsyncIterator()
      let chunk = try await iterator.next()
      #expect(chunk.map { String(buffer: $0) }?.contains("live events of test") == true)
    }
  }

  /// Finding 6: the overview shows the project's own reports, not the server's.
  @Test(.requires(.postgres), arguments: Engine.allCases)
  func theOverviewShowsTheProjectsOwnFigures(_ engine: Engine) async throws {
    try await ConsoleHarness.with(engine) { server in
      let other = try await server.storage.transaction { store in
        try store.apiKeys.createAPIKey(project: "b", role: .client, label: "", now: Date())
      }.key
      let registered = try await server.api(.POST, "/v1/devices", key: other)
      let object = try JSONSerialization.jsonObject(with: Data(registered.body.utf8))
      let device = try #require(object as? [String: Any])
      let (id, secret) = (
        try #require(device["id"] as? String), try #require(device["secret"] as? String)
      )
      for _ in 0..<3 {
        let answer = try await server.api(
          .POST, "/v1/devices/\(id)/report", json: "{}", key: other,
          headers: [ResolverContract.deviceSecretHeader: secret])
        #expect(answer.status == 200)
      }
      _ = try await server.report(try await server.device(), "{}")
      let (cookie, _) = try await server.adminSession()
      let overview = try await server.request(.GET, "/console", cookie: cookie)
      #expect(overview.body.contains("1 since start"), "\(overview.body)")
      #expect(!overview.body.contains("4 since start"))
      // /metrics needs an admin key by default.
      #expect(try await server.request(.GET, "/metrics").status == 401)
    }
  }
}
