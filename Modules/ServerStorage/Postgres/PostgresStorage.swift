import Foundation
public import Logging
import NIOCore
import NIOPosix
import PostgresNIO
@_spi(Resolver) import Core

/// Storage in PostgreSQL, for deployments that outgrow one machine: several `nearby-server`
/// processes behind a load balancer share one database and nothing else.
///
/// How several instances stay consistent: transactions run concurrently, on this instance and
/// on others; one that runs the engine first locks the rows of exactly the devices it can
/// change, in one statement in id order, or without waiting when out of order (see
/// `SQLStore.prepare(forReport:…)`), so reports about different devices never wait for each
/// other and two transactions never wait in a circle. Due deadlines are taken one per transaction with `FOR UPDATE SKIP LOCKED`, so
/// the sweepers of several instances share them. A transaction PostgreSQL aborts as a deadlock
/// or a serialization failure, or that met a row held where it would not wait, is run again
/// (at most ``maximumAttempts`` times). There is no
/// lock for the whole cluster; migrations alone take the advisory lock ``lockKey``, so
/// instances that start together migrate once.
///
/// Events reach other instances' streams through `LISTEN`/`NOTIFY` on
/// `SQLStore.eventChannel` (see ``eventNotifications()``); nothing polls.
///
/// The engine's store is synchronous, so each transaction runs on a thread of a blocking pool
/// as large as the connection pool and waits there for each query's answer; Swift's
/// cooperative threads never block.
public final class PostgresStorage: ResolverStorage {
  /// The advisory lock migrations take ("nearby" in ASCII).
  public static let lockKey: Int64 = 0x6E65_6172_6279
  /// How many times a transaction is tried when PostgreSQL aborts it as a deadlock or a
  /// serialization failure.
  public static let maximumAttempts = 5
  /// Connections (and blocking threads) when the URL does not say (`?connections=N`).
  public static let defaultConnections = 16

  public let description: String
  private let client: PostgresClient
  private let runner: Task<Void, Never>
  private let threads: NIOThreadPool
  private let logger: Logger
  /// Nil when the URL says `?prepared=off`.
  private let prepared: PreparedStatementCache?

  /// Connects to the database named by `url` (`postgres://user[:password]@host[:port]/database`,
  /// or `postgres://user@/database?host=/run/postgresql` for a Unix socket; `?connections=N`
  /// sets the pool size, `?prepared=off` runs every statement unnamed) and migrates it.
  /// - Parameters:
  ///   - connections: the most connections (and blocking threads) transactions use at once,
  ///     when the URL does not say; one more connection listens for event notifications.
  /// - Throws: ``SQLStorageError/badDatabaseURL(_:)`` for a URL it cannot use; the database's
  ///   errors (cannot connect, authentication, schema too new).
  public init(
    url: String, connections: Int = PostgresStorage.defaultConnections,
    logger: Logger = Logger(label: "nearby.storage")
  ) async throws {
    let (configuration, pool, prepares) = try Self.configuration(
      from: url, connections: connections)
    prepared = prepares ? PreparedStatementCache() : nil
    self.logger = logger
    description = Self.redacted(url)
    client = PostgresClient(configuration: configuration, backgroundLogger: logger)
    let client = self.client
    runner = Task { await client.run() }
    let threads = NIOThreadPool(numberOfThreads: pool)
    self.threads = threads
    threads.start()
    do {
      // Migrations change the schema: nothing they run is kept prepared.
      try await Self.run(
        client: client, threads: threads, prepared: nil, logger: logger, begin: "BEGIN"
      ) {
        store in
        try store.sql.execute("SELECT pg_advisory_xact_lock(?)", [.integer(Self.lockKey)])
        try Schema.migrate(store.sql)
      }
    } catch {
      await shutdown()
      throw error
    }
    logger.info(
      "storage ready",
      metadata: [
        "postgres": "\(description)", "schema": "\(Schema.version)", "connections": "\(pool)",
      ])
  }

  public var runsConcurrently: Bool { true }

  public func transaction<T: Sendable>(_ body: @escaping @Sendable (SQLStore) throws -> T)
    async throws -> T
  {
    var attempt = 1
    while true {
      do {
        return try await Self.run(
          client: client, threads: threads, prepared: prepared, logger: logger, begin: "BEGIN", body
        )
      } catch {
        guard attempt < Self.maximumAttempts, Self.isRetryable(error) else { throw error }
        logger.debug(
          "transaction retried",
          metadata: ["attempt": "\(attempt)", "error": "\(String(reflecting: error))"])
        attempt += 1
        // A little jitter, so the two that collided do not collide again.
        try await Task.sleep(for: .milliseconds(Int.random(in: 1...(5 * attempt))))
      }
    }
  }

  /// Deadlock (40P01) or serialization failure (40001), where PostgreSQL rolled the
  /// transaction back and running it again is the documented remedy; or a row locked
  /// without waiting that another transaction held (``SQLStorageError/lockBusy``), or a row
  /// changed under it (``SQLStorageError/raced``).
  static func isRetryable(_ error: any Error) -> Bool {
    if let error = error as? SQLStorageError { return error == .lockBusy || error == .raced }
    let state = PostgresStatements.sqlState(of: error)
    return state == "40P01" || state == "40001"
  }

  /// One transaction on a blocking-pool thread: `begin`, `body`, then COMMIT (ROLLBACK if it
  /// throws).
  private static func run<T: Sendable>(
    client: PostgresClient, threads: NIOThreadPool, prepared: PreparedStatementCache?,
    logger: Logger, begin: String,
    _ body: @escaping @Sendable (SQLStore) throws -> T
  ) async throws -> T {
    try await client.withConnection { connection in
      try await threads.runIfActive {
        let sql = PostgresSQLConnection(connection, prepared: prepared, logger: logger)
        try sql.execute(begin)
        do {
          let store = SQLStore(sql)
          let result = try body(store)
          try store.finish()
          try sql.execute("COMMIT")
          return result
        } catch {
          try? sql.execute("ROLLBACK")
          throw error
        }
      }
    }
  }

  /// Listens on `SQLStore.eventChannel` on a connection of its own (reconnecting after a
  /// second when it fails, and then asking every stream to look: notifications sent in
  /// between are lost). Buffers at most 4 096 notifications; past that it drops them and
  /// sends ``EventNotification/resynchronize`` once there is room.
  public func eventNotifications() -> AsyncStream<EventNotification>? {
    let (stream, continuation) = AsyncStream.makeStream(
      of: EventNotification.self, bufferingPolicy: .bufferingOldest(4096))
    let (client, logger) = (client, logger)
    let listener = Task {
      var overflowed = false
      func send(_ notification: EventNotification) {
        if overflowed {
          if case .enqueued = continuation.yield(.resynchronize) { overflowed = false }
        }
        if case .dropped = continuation.yield(notification) { overflowed = true }
      }
      while !Task.isCancelled {
        do {
          try await client.withConnection { connection in
            try await connection.listen(on: SQLStore.eventChannel) { notifications in
              send(.resynchronize)
              for try await notification in notifications {
                let ids = notification.payload.split(separator: " ").compactMap {
                  DeviceID(String($0))
                }
                if !ids.isEmpty { send(.devices(ids)) }
              }
            }
          }
        } catch {
          if Task.isCancelled { break }
          logger.warning(
            "event notifications interrupted; listening again in 1 s",
            metadata: ["error": "\(String(reflecting: error))"])
        }
        try? await Task.sleep(for: .seconds(1))
      }
      continuation.finish()
    }
    continuation.onTermination = { _ in listener.cancel() }
    return stream
  }

  public func read<T: Sendable>(_ body: @escaping @Sendable (SQLStore) throws -> T) async throws
    -> T
  {
    let (logger, threads, prepared) = (self.logger, self.threads, self.prepared)
    return try await client.withConnection { connection in
      try await threads.runIfActive {
        let sql = PostgresSQLConnection(connection, prepared: prepared, logger: logger)
        try sql.execute("BEGIN READ ONLY")
        do {
          let result = try body(SQLStore(sql))
          try sql.execute("COMMIT")
          return result
        } catch {
          try? sql.execute("ROLLBACK")
          throw error
        }
      }
    }
  }

  public func shutdown() async {
    runner.cancel()
    try? await threads.shutdownGracefully()
  }

  /// The client's configuration, the pool size for transactions (one more connection is
  /// allowed, for listening), and whether statements are prepared (`?prepared=off` says
  /// not: for a connection pooler in front of PostgreSQL that does not keep prepared
  /// statements, such as PgBouncer in transaction mode before 1.21).
  static func configuration(from text: String, connections: Int) throws
    -> (PostgresClient.Configuration, pool: Int, prepared: Bool)
  {
    guard let url = URLComponents(string: text),
      url.scheme == "postgres" || url.scheme == "postgresql"
    else {
      throw SQLStorageError.badDatabaseURL(
        "'\(redacted(text))' is not a postgres:// URL (postgres://user:password@host:5432/database)"
      )
    }
    let database = url.path.hasPrefix("/") ? String(url.path.dropFirst()) : url.path
    guard let user = url.user, !user.isEmpty, !database.isEmpty else {
      throw SQLStorageError.badDatabaseURL(
        "'\(redacted(text))' needs a user and a database: postgres://user@host/database")
    }
    let socket = url.queryItems?.first { $0.name == "host" }?.value
    var configuration: PostgresClient.Configuration
    if let socket, socket.hasPrefix("/") {
      let path =
        socket.hasSuffix(".s.PGSQL.\(url.port ?? 5432)")
        ? socket : "\(socket)/.s.PGSQL.\(url.port ?? 5432)"
      configuration = .init(
        unixSocketPath: path, username: user, password: url.password, database: database)
    } else {
      guard let host = url.host, !host.isEmpty else {
        throw SQLStorageError.badDatabaseURL(
          "'\(redacted(text))' needs a host, or ?host=/path/to/socket-folder")
      }
      configuration = .init(
        host: host, port: url.port ?? 5432, username: user, password: url.password,
        database: database, tls: .disable)
    }
    var pool = max(connections, 1)
    if let given = url.queryItems?.first(where: { $0.name == "connections" })?.value {
      guard let value = Int(given), (1...1000).contains(value) else {
        throw SQLStorageError.badDatabaseURL(
          "'\(redacted(text))': connections must be a number from 1 to 1000")
      }
      pool = value
    }
    var prepared = true
    if let given = url.queryItems?.first(where: { $0.name == "prepared" })?.value {
      guard let value = ["on": true, "off": false][given] else {
        throw SQLStorageError.badDatabaseURL("'\(redacted(text))': prepared must be on or off")
      }
      prepared = value
    }
    configuration.options.maximumConnections = pool + 1
    configuration.options.minimumConnections = 0
    return (configuration, pool, prepared)
  }

  /// The URL without its password, for logs.
  static func redacted(_ text: String) -> String {
    guard var url = URLComponents(string: text), url.password != nil else { return text }
    url.password = "***"
    return url.string ?? "postgres://…"
  }
}
