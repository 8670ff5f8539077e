public import Foundation
public import Logging
import NIOCore
import NIOPosix
import NIOSSL
import PostgresNIO
@_spi(Resolver) import Core

/// Storage in PostgreSQL, for deployments that outgrow one machine: several `nearby-server`
/// processes behind a load balancer share one database and nothing else.
///
/// How several instances stay consistent: transactions run concurrently, on this instance and
/// on others; one that runs the engine first locks the rows of exactly the devices it can
/// change, in one statement in id order, or without waiting when out of order (see
/// `DeviceLocks.prepare(forReport:…)`), so reports about different devices never wait for each
/// other and two transactions never wait in a circle. Due deadlines are taken one per transaction with `FOR UPDATE SKIP LOCKED`, so
/// the sweepers of several instances share them. A transaction PostgreSQL aborts as a deadlock
/// or a serialization failure, or that met a row held where it would not wait, is run again
/// (at most ``maximumAttempts`` times). There is no
/// lock for the whole cluster; migrations alone take the advisory lock ``lockKey``, so
/// instances that start together migrate once.
///
/// Events reach other instances' streams through `LISTEN`/`NOTIFY` on
/// `EventLog.eventChannel` (see ``eventNotifications()``); nothing polls.
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
  /// The query items of a database URL that nearby reads and libpq does not know (libpq's
  /// tools, as `psql` or `pgbench`, refuse a URL with them): `connections`, `prepared`,
  /// `refresh`.
  public static let nearbyQueryItems: Set<String> = ["connections", "prepared", "refresh"]

  public let description: String
  let client: PostgresClient
  /// Runs the client's connection pool; ended and awaited by ``shutdown()``.
  private let runner = WorkGroup()
  private let threads: NIOThreadPool
  let logger: Logger
  /// Nil when the URL says `?prepared=off`.
  let prepared: PreparedStatementCache?
  /// False when the URL says `?refresh=off`: every report runs the engine.
  package let refreshesReports: Bool
  /// How many reports were applied in one statement, and why the others were not.
  package let reportRoutes = ReportRoutes()
  /// The devices that authenticated through this instance, for their next refresh report.
  package let authenticatedDevices = AuthenticatedDevices()

  /// Connects to the database named by `url` (`postgres://user[:password]@host[:port]/database`,
  /// or `postgres://user@/database?host=/run/postgresql` for a Unix socket) and migrates it.
  ///
  /// The URL's query may say: `connections=N`, the pool size; `prepared=off`, every statement
  /// unnamed; `refresh=off`, every report run by the engine over a transaction (by default a
  /// report that only refreshes fresh sightings is one statement: see
  /// `ResolverStorage.report`); `sslmode=` `disable` (the default), `allow`/`prefer`,
  /// `require`, `verify-ca` or `verify-full`, as libpq (see `PostgresSSLMode`), ignored for a
  /// Unix socket;
  /// `sslrootcert=FILE`, the PEM CA certificates that check the server's (default: the
  /// system's trust store), or `system`; `passfile=PATH`, the password file.
  ///
  /// The password, as libpq finds it: the URL's, else `PGPASSWORD`, else the line of the
  /// password file (`passfile`, else `PGPASSFILE`, else `~/.pgpass`, in `.pgpass` format) for
  /// this host, port, database and user. ``description`` never holds a password.
  /// - Parameters:
  ///   - url: the database, as above.
  ///   - connections: the most connections (and blocking threads) transactions use at once,
  ///     when the URL does not say; one more connection listens for event notifications.
  ///   - environment: where `PGPASSWORD`, `PGPASSFILE` and `HOME` are read.
  ///   - logger: where the storage and the PostgreSQL client log.
  /// - Throws: ``SQLStorageError/badDatabaseURL(_:)`` for a URL it cannot use (an unknown
  ///   `sslmode`, a missing `sslrootcert` file, a password file open to its group or others);
  ///   the database's errors (cannot connect, TLS refused or the certificate not trusted,
  ///   authentication, schema too new).
  public init(
    url: String, connections: Int = PostgresStorage.defaultConnections,
    environment: [String: String] = ProcessInfo.processInfo.environment,
    logger: Logger = Logger(label: "nearby.storage")
  ) async throws {
    let options = try Self.options(
      from: url, connections: connections, environment: environment)
    let (configuration, pool) = (options.configuration, options.pool)
    prepared = options.prepared ? PreparedStatementCache() : nil
    refreshesReports = options.refresh
    self.logger = logger
    description = Self.redacted(url)
    // One connection first, on its own: the pool would retry a failing one for a minute and
    // then say only that it gave up.
    try await Self.probe(options, logger: logger)
    client = PostgresClient(configuration: configuration, backgroundLogger: logger)
    let client = self.client
    runner.start { await client.run() }
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

  public func transaction<T: Sendable>(_ body: @escaping @Sendable (SQLTransaction) throws -> T)
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
    _ body: @escaping @Sendable (SQLTransaction) throws -> T
  ) async throws -> T {
    try await client.withConnection { connection in
      try await threads.runIfActive {
        let sql = PostgresSQLConnection(connection, prepared: prepared, logger: logger)
        try sql.execute(begin)
        do {
          let store = SQLTransaction(sql)
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

  /// Listens on `EventLog.eventChannel` on a connection of its own (reconnecting after a
  /// second when it fails, and then asking every stream to look: notifications sent in
  /// between are lost). Buffers at most 4 096 notifications; past that it drops them and
  /// sends ``EventNotification/resynchronize`` once there is room.
  public func eventNotifications() -> AsyncStream<EventNotification>? {
    let (stream, continuation) = AsyncStream.makeStream(
      of: EventNotification.self, bufferingPolicy: .bufferingOldest(4096))
    let (client, logger) = (client, logger)
    // A group of its own per stream, ended when the stream's reader goes away.
    let listener = WorkGroup()
    listener.start {
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
            try await connection.listen(on: EventLog.eventChannel) { notifications in
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
    continuation.onTermination = { _ in listener.end() }
    return stream
  }

  public func read<T: Sendable>(_ body: @escaping @Sendable (SQLTransaction) throws -> T)
    async throws
    -> T
  {
    let (logger, threads, prepared) = (self.logger, self.threads, self.prepared)
    return try await client.withConnection { connection in
      try await threads.runIfActive {
        let sql = PostgresSQLConnection(connection, prepared: prepared, logger: logger)
        try sql.execute("BEGIN READ ONLY")
        do {
          let result = try body(SQLTransaction(sql))
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
    runner.end()
    await runner.ended()
    try? await threads.shutdownGracefully()
  }
}
