import AsyncHTTPClient
import Foundation
import Logging
import NIOCore
import NIOHTTP1
import NearbyServer
import ServerStorage
import ServerTestSupport
import ServiceLifecycle
import TestSupport
import Testing
import ResolverWire

/// A resolver server with its console on a free loopback port, over SQLite or PostgreSQL, and
/// a browser-like client (cookies by hand, redirects not followed).
final class ConsoleHarness: AsyncShutdown {
  enum Engine: String, CaseIterable, CustomTestStringConvertible {
    case sqlite, postgres
    var testDescription: String { rawValue }
  }

  let storage: any ResolverStorage
  /// The SQLite database's folder, removed at shutdown (`nil` for PostgreSQL).
  let directory: URL?
  let port: Int
  let task: Task<Void, any Error>
  let group: ServiceGroup
  /// An admin and a client key of project "test".
  let admin: String
  let client: String

  var base: String { "http://127.0.0.1:\(port)" }

  static func start(
    _ engine: Engine, configure: (inout ResolverServerConfiguration) -> Void = { _ in },
    now: @escaping @Sendable () -> Date = { Date() }
  ) async throws -> ConsoleHarness {
    let directory: URL? =
      switch engine {
      case .sqlite:
        FileManager.default.temporaryDirectory
          .appendingPathComponent("nearby-console-\(UUID().uuidString)")
      case .postgres: nil
      }
    let storage: any ResolverStorage =
      if let directory {
        try SQLiteStorage(path: directory.appendingPathComponent("db.sqlite").path)
      } else {
        try await PostgresStorage(url: try await TestPostgres.freshDatabase())
      }
    let (admin, client) = try await storage.transaction { store in
      (
        try store.apiKeys.createAPIKey(project: "test", role: .admin, label: "ops", now: Date())
          .key,
        try store.apiKeys.createAPIKey(project: "test", role: .client, label: "app", now: Date())
          .key
      )
    }
    var configuration = ResolverServerConfiguration()
    configuration.port = 0
    configuration.sweepInterval = .milliseconds(100)
    configure(&configuration)
    let (ready, continuation) = AsyncStream.makeStream(of: Int.self)
    let server = ResolverServer(
      storage: storage, configuration: configuration, logger: Logger(label: "test.console"),
      now: now)
    let group = ServiceGroup(
      configuration: .init(
        services: [.init(service: Runner(server: server, ready: continuation))],
        logger: Logger(label: "test.console")))
    let task = Task { try await group.run() }
    var iterator = ready.makeAsyncIterator()
    guard let port = await iterator.next() else { throw FixtureError("the server did not start") }
    return ConsoleHarness(
      storage: storage, directory: directory, port: port, task: task, group: group, admin: admin,
      client: client)
  }

  private init(
    storage: any ResolverStorage, directory: URL?, port: Int, task: Task<Void, any Error>,
    group: ServiceGroup, admin: String, client: String
  ) {
    (self.storage, self.directory, self.port) = (storage, directory, port)
    (self.task, self.group) = (task, group)
    (self.admin, self.client) = (admin, client)
  }

  /// A server for `body`, shut down when it ends (thrown or not).
  static func with(
    _ engine: Engine, configure: (inout ResolverServerConfiguration) -> Void = { _ in },
    now: @escaping @Sendable () -> Date = { Date() },
    _ body: (ConsoleHarness) async throws -> Void
  ) async throws {
    let console = try await start(engine, configure: configure, now: now)
    do { try await body(console) } catch {
      await console.shutdown()
      throw error
    }
    await console.shutdown()
  }

  func shutdown() async {
    await group.triggerGracefulShutdown()
    _ = await task.result
    await storage.shutdown()
    if let directory { try? FileManager.default.removeItem(at: directory) }
  }

  /// One request; `cookie` is sent as the Cookie header, `form` as a urlencoded body.
  func request(
    _ method: HTTPMethod, _ path: String, cookie: String? = nil, form: [String: String]? = nil,
    headers: [String: String] = [:]
  ) async throws -> Answer {
    var request = HTTPClientRequest(url: base + path)
    request.method = method
    if let cookie { request.headers.add(name: "Cookie", value: cookie) }
    for (name, value) in headers { request.headers.add(name: name, value: value) }
    if let form {
      request.headers.add(name: "Content-Type", value: "application/x-www-form-urlencoded")
      request.body = .bytes(ByteBuffer(string: Self.encode(form)))
    }
    let response = try await Self.client.execute(request, timeout: .seconds(20))
    let bytes = try await response.body.collect(upTo: 4 << 20)
    return Answer(
      status: Int(response.status.code),
      headers: response.headers.map { ($0.name.lowercased(), $0.value) },
      body: String(buffer: bytes))
  }

  /// Signs in with `key`; the answer and the session cookie ("name=value"), if one was set.
  func signIn(_ key: String) async throws -> (Answer, cookie: String?) {
    let page = try await request(.GET, "/console/sign-in")
    let preCookie = try #require(page.cookie("nearby_console_sign_in"))
    let csrf = try #require(page.csrf)
    let answer = try await request(
      .POST, "/console/sign-in", cookie: preCookie, form: ["csrf": csrf, "key": key])
    return (answer, answer.cookie("nearby_console"))
  }

  /// The signed-in session cookie of the admin key, and the CSRF token of its forms.
  func adminSession() async throws -> (cookie: String, csrf: String) {
    let (answer, cookie) = try await signIn(admin)
    #expect(answer.status == 303)
    let session = try #require(cookie)
    let overview = try await request(.GET, "/console", cookie: session)
    #expect(overview.status == 200)
    return (session, try #require(overview.csrf))
  }

  /// An API call with the admin key (or `key`).
  func api(
    _ method: HTTPMethod, _ path: String, json: String? = nil, key: String? = nil,
    headers extra: [String: String] = [:]
  ) async throws -> Answer {
    var headers = [ResolverContract.apiKeyHeader: key ?? admin].merging(extra) { $1 }
    if json != nil { headers["Content-Type"] = "application/json" }
    var request = HTTPClientRequest(url: base + path)
    request.method = method
    for (name, value) in headers { request.headers.add(name: name, value: value) }
    if let json { request.body = .bytes(ByteBuffer(string: json)) }
    let response = try await Self.client.execute(request, timeout: .seconds(20))
    let bytes = try await response.body.collect(upTo: 4 << 20)
    return Answer(
      status: Int(response.status.code),
      headers: response.headers.map { ($0.name.lowercased(), $0.value) },
      body: String(buffer: bytes))
  }

  /// A device registered with the client key: its id and secret.
  func device() async throws -> (id: String, secret: String) {
    let answer = try await api(.POST, "/v1/devices", key: client)
    let object = try JSONSerialization.jsonObject(with: Data(answer.body.utf8)) as? [String: Any]
    return (try #require(object?["id"] as? String), try #require(object?["secret"] as? String))
  }

  /// A device's report (expecting 200).
  func report(_ device: (id: String, secret: String), _ json: String) async throws -> Answer {
    let answer = try await api(
      .POST, "/v1/devices/\(device.id)/report", json: json, key: client,
      headers: [ResolverContract.deviceSecretHeader: device.secret])
    #expect(answer.status == 200, "\(answer.body)")
    return answer
  }

  static func encode(_ form: [String: String]) -> String {
    var allowed = CharacterSet.alphanumerics
    allowed.insert(charactersIn: "-._~")
    return form.sorted { $0.key < $1.key }.map { name, value in
      "\(name)=\(value.addingPercentEncoding(withAllowedCharacters: allowed) ?? "")"
    }.joined(separator: "&")
  }

  /// A client that does not follow redirects (the tests look at them).
  static let client = HTTPClient(
    eventLoopGroup: HTTPClient.defaultEventLoopGroup,
    configuration: .init(redirectConfiguration: .disallow))
}

/// An HTTP answer as the tests read it.
struct Answer: Sendable {
  var status: Int
  var headers: [(String, String)]
  var body: String

  func header(_ name: String) -> String? { headers.first { $0.0 == name }?.1 }

  /// The `Set-Cookie` header that sets `name`, whole.
  func setCookie(_ name: String) -> String? {
    headers.first { $0.0 == "set-cookie" && $0.1.hasPrefix(name + "=") }?.1
  }

  /// `name=value` from the `Set-Cookie` that sets `name`.
  func cookie(_ name: String) -> String? {
    setCookie(name).map { String($0.split(separator: ";")[0]) }
  }

  /// The page's CSRF token (the first form's).
  var csrf: String? {
    guard let range = body.range(of: #"name="csrf" value=""#) else { return nil }
    let rest = body[range.upperBound...]
    return rest.firstIndex(of: "\"").map { String(rest[..<$0]) }
  }
}

private struct Runner: Service {
  let server: ResolverServer
  let ready: AsyncStream<Int>.Continuation
  func run() async throws { try await server.run(onListening: { ready.yield($0) }) }
}
