import Foundation
import Logging
import NearbyServer
import Resolution
import ServerStorage
import ServiceLifecycle
import ServerTestSupport
import Synchronization
import TestSupport
import Testing

/// A resolver server on a free loopback port over a fresh SQLite file (or a given storage),
/// with one API key, stoppable and restartable on the same port and database.
final class ServerHarness: AsyncShutdown {
  let storage: any ResolverStorage
  let configuration: ResolverServerConfiguration
  let apiKey: String
  /// The peer network the server joins, when started with peer transports.
  let peerBridge: PeerBridgeConfiguration?
  /// The server's clock.
  let now: @Sendable () -> Date
  /// The folder of the SQLite file the harness made, removed at ``shutdown()``.
  private let folder: URL?
  private let running = Mutex<(group: ServiceGroup, task: Task<Void, any Error>)?>(nil)
  private let boundPort = Mutex(0)

  var url: URL { URL(string: "http://127.0.0.1:\(boundPort.withLock { $0 })")! }

  /// Starts a server; `lostAfter` is short so tests see lost quickly. With `peerBridge` the
  /// server joins a peer network with the key it gives (made a client key of the project
  /// when `peerRole` says so); such a server cannot be restarted (its transports end with it).
  static func start(
    storage: (any ResolverStorage)? = nil, lostAfter: Duration = .seconds(2),
    configure: (inout ResolverServerConfiguration) -> Void = { _ in },
    peerBridge: ((_ key: String) -> PeerBridgeConfiguration)? = nil,
    peerRole: APIKeyRole = .client,
    now: @escaping @Sendable () -> Date = { Date() }
  ) async throws -> ServerHarness {
    var folder: URL?
    let storage =
      try storage
      ?? {
        let made = FileManager.default.temporaryDirectory
          .appendingPathComponent("nearby-server-\(UUID().uuidString)")
        folder = made
        return try SQLiteStorage(path: made.appendingPathComponent("db.sqlite").path)
      }()
    var configuration = ResolverServerConfiguration()
    configuration.port = 0
    configuration.resolution = ResolutionConfiguration(lostAfter: lostAfter)
    configuration.sweepInterval = .milliseconds(100)
    configuration.eventPollInterval = .milliseconds(200)
    configure(&configuration)
    let key = try await storage.transaction { store in
      try store.apiKeys.createAPIKey(project: "test", role: .admin, label: "", now: Date())
    }
    var bridge: PeerBridgeConfiguration?
    if let peerBridge {
      let peerKey = try await storage.transaction { store in
        try store.apiKeys.createAPIKey(project: "test", role: peerRole, label: "peers", now: Date())
      }
      bridge = peerBridge(peerKey.key)
    }
    let harness = ServerHarness(
      storage: storage, configuration: configuration, apiKey: key.key, peerBridge: bridge,
      now: now, folder: folder)
    try await harness.start()
    return harness
  }

  /// Where a test's server keeps its state.
  enum Engine: String, CaseIterable, CustomTestStringConvertible {
    case sqlite, postgres
    var testDescription: String { rawValue }
  }

  /// The storage to start a server on: nil for SQLite (``start(storage:lostAfter:configure:peerBridge:peerRole:now:)``
  /// makes a fresh file, removed at ``shutdown()``), a new database on the test PostgreSQL
  /// server (the test needs `.requires(.postgres)`).
  static func storage(_ engine: Engine) async throws -> (any ResolverStorage)? {
    switch engine {
    case .sqlite: nil
    case .postgres: try await PostgresStorage(url: try await TestPostgres.freshDatabase())
    }
  }

  private init(
    storage: any ResolverStorage, configuration: ResolverServerConfiguration, apiKey: String,
    peerBridge: PeerBridgeConfiguration?, now: @escaping @Sendable () -> Date, folder: URL?
  ) {
    self.storage = storage
    self.configuration = configuration
    self.apiKey = apiKey
    self.peerBridge = peerBridge
    self.now = now
    self.folder = folder
  }

  /// Starts serving (again): on the port of the last run, if there was one.
  func start() async throws {
    var configuration = configuration
    let previous = boundPort.withLock { $0 }
    if previous != 0 { configuration.port = previous }
    let (ready, readyContinuation) = AsyncStream.makeStream(of: Int.self)
    let server = ResolverServer(
      storage: storage, configuration: configuration, peerBridge: peerBridge,
      logger: Logger(label: "test.server"), now: now)
    let group = ServiceGroup(
      configuration: .init(
        services: [.init(service: ServerService(server: server, ready: readyContinuation))],
        logger: Logger(label: "test.server")))
    let task = Task {
      defer { readyContinuation.finish() }
      try await group.run()
    }
    running.withLock { $0 = (group, task) }
    var iterator = ready.makeAsyncIterator()
    guard let port = await iterator.next() else {
      _ = try await task.value
      throw HarnessError("the server did not start")
    }
    boundPort.withLock { $0 = port }
  }

  /// Stops serving gracefully (the database stays).
  func stop() async {
    guard
      let (group, task) = running.withLock({ state in
        defer { state = nil }; return state
      })
    else { return }
    await group.triggerGracefulShutdown()
    _ = await task.result
  }

  func shutdown() async {
    await stop()
    await storage.shutdown()
    if let folder { try? FileManager.default.removeItem(at: folder) }
  }
}

/// Runs the server and reports its port.
private struct ServerService: Service {
  let server: ResolverServer
  let ready: AsyncStream<Int>.Continuation

  func run() async throws {
    try await server.run(onListening: { ready.yield($0) })
  }
}

struct HarnessError: Error, CustomStringConvertible {
  let description: String
  init(_ description: String) { self.description = description }
}
