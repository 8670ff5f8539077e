import Foundation
public import Logging
import NIOCore
import NIOPosix
import PostgresNIO

/// Storage in PostgreSQL, for deployments that outgrow one machine: several `nearby server`
/// processes behind a load balancer share one database and nothing else.
///
/// How several instances stay consistent: every transaction that changes resolver state
/// first takes the transaction-scoped advisory lock ``lockKey``, so engine transactions are
/// serialized across instances exactly as SQLite serializes its writers; the event log lives
/// in the database, so a device's event stream can be served by any instance (each polls and
/// is woken by its own writes; see the server). Migrations run under the same lock, so
/// instances that start together migrate once.
///
/// The engine's store is synchronous, so each transaction runs on a thread of a small
/// blocking pool and waits there for each query's answer; Swift's cooperative threads never
/// block.
public final class PostgresStorage: ResolverStorage {
  /// The advisory lock that serializes resolver transactions ("nearby" in ASCII).
  public static let lockKey: Int64 = 0x6E65_6172_6279

  public let description: String
  private let client: PostgresClient
  private let runner: Task<Void, Never>
  private let threads: NIOThreadPool
  private let logger: Logger
  private let batcher: TransactionBatcher

  /// Connects to the database named by `url` (`postgres://user[:password]@host[:port]/database`,
  /// or `postgres://user@/database?host=/run/postgresql` for a Unix socket) and migrates it.
  /// - Parameters:
  ///   - connections: the most connections (and blocking threads) it uses at once.
  /// - Throws: ``SQLStorageError/badDatabaseURL(_:)`` for a URL it cannot use; the database's
  ///   errors (cannot connect, authentication, schema too new).
  public init(url: String, connections: Int = 4, logger: Logger = Logger(label: "nearby.storage"))
    async throws
  {
    let configuration = try Self.configuration(from: url, connections: connections)
    self.logger = logger
    description = Self.redacted(url)
    client = PostgresClient(configuration: configuration, backgroundLogger: logger)
    let client = self.client
    runner = Task { await client.run() }
    let threads = NIOThreadPool(numberOfThreads: max(connections, 1))
    self.threads = threads
    threads.start()
    batcher = TransactionBatcher { [logger] body in
      try await Self.lockedTransaction(client: client, threads: threads, logger: logger, body)
    }
    do {
      try await Self.lockedTransaction(client: client, threads: threads, logger: logger) {
        store in try Schema.migrate(store.sql)
      }
    } catch {
      await shutdown()
      throw error
    }
    logger.info(
      "storage ready", metadata: ["postgres": "\(description)", "schema": "\(Schema.version)"])
  }

  public func transaction<T: Sendable>(_ body: @escaping @Sendable (SQLStore) throws -> T)
    async throws -> T
  {
    try await batcher.submit(body)
  }

  /// One transaction under the advisory lock, on a blocking-pool thread.
  private static func lockedTransaction<T: Sendable>(
    client: PostgresClient, threads: NIOThreadPool, logger: Logger,
    _ body: @escaping @Sendable (SQLStore) throws -> T
  ) async throws -> T {
    try await client.withConnection { connection in
      try await threads.runIfActive {
        let sql = PostgresSQLConnection(connection, logger: logger)
        try sql.execute("BEGIN")
        do {
          try sql.execute("SELECT pg_advisory_xact_lock(?)", [.integer(Self.lockKey)])
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

  public func read<T: Sendable>(_ body: @escaping @Sendable (SQLStore) throws -> T) async throws
    -> T
  {
    let logger = self.logger
    let threads = self.threads
    return try await client.withConnection { connection in
      try await threads.runIfActive {
        let sql = PostgresSQLConnection(connection, logger: logger)
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

  static func configuration(from text: String, connections: Int) throws
    -> PostgresClient.Configuration
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
    configuration.options.maximumConnections = max(connections, 1)
    configuration.options.minimumConnections = 0
    return configuration
  }

  /// The URL without its password, for logs.
  static func redacted(_ text: String) -> String {
    guard var url = URLComponents(string: text), url.password != nil else { return text }
    url.password = "***"
    return url.string ?? "postgres://…"
  }
}

/// A PostgreSQL connection used synchronously from a blocking-pool thread: each statement is
/// sent and its answer awaited with `wait()`, which is allowed off the connection's event loop.
final class PostgresSQLConnection: SQLConnection {
  private let connection: PostgresConnection
  private let logger: Logger
  /// `?` placeholders rewritten as `$1, $2, …`, by statement text.
  private var numbered: [String: String] = [:]

  init(_ connection: PostgresConnection, logger: Logger) {
    self.connection = connection
    self.logger = logger
  }

  var dialect: SQLDialect { .postgres }

  func execute(_ sql: String, _ binds: [SQLValue]) throws {
    _ = try run(sql, binds)
  }

  func query(_ sql: String, _ binds: [SQLValue]) throws -> [SQLRow] {
    try run(sql, binds).map { row in
      SQLRow(try row.map(Self.value))
    }
  }

  private func run(_ sql: String, _ binds: [SQLValue]) throws -> PostgresQueryResult {
    var bindings = PostgresBindings(capacity: binds.count)
    for bind in binds {
      switch bind {
      case .null: bindings.appendNull()
      case .integer(let value): bindings.append(value)
      case .real(let value): bindings.append(value)
      case .text(let value): bindings.append(value)
      case .blob(let value): bindings.append(ByteBuffer(bytes: value))
      }
    }
    let query = PostgresQuery(unsafeSQL: numberedPlaceholders(sql), binds: bindings)
    return try connection.query(query, logger: logger).wait()
  }

  private func numberedPlaceholders(_ sql: String) -> String {
    if let known = numbered[sql] { return known }
    var result = ""
    var index = 0
    for character in sql {
      if character == "?" {
        index += 1
        result += "$\(index)"
      } else {
        result.append(character)
      }
    }
    numbered[sql] = result
    return result
  }

  private static func value(_ cell: PostgresCell) throws -> SQLValue {
    guard cell.bytes != nil else { return .null }
    switch cell.dataType {
    case .int2, .int4, .int8, .oid: return .integer(try cell.decode(Int64.self))
    case .float4, .float8, .numeric: return .real(try cell.decode(Double.self))
    case .bool: return .integer(try cell.decode(Bool.self) ? 1 : 0)
    case .bytea:
      var buffer = try cell.decode(ByteBuffer.self)
      return .blob(buffer.readBytes(length: buffer.readableBytes) ?? [])
    case .void: return .null
    default: return .text(try cell.decode(String.self))
    }
  }
}
