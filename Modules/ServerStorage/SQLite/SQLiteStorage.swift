public import Foundation
import Core
import GRDB
public import Logging

/// The default storage: one SQLite file (write-ahead log), created with its folders on first
/// use and migrated on open. Nothing to set up.
///
/// Concurrent transactions are committed together (an internal `TransactionBatcher`), each in
/// its own savepoint.
///
/// Durability: every transaction is committed to the write-ahead log before `transaction`
/// returns, so a crash of the process loses nothing; `synchronous = NORMAL` means a power
/// loss can lose the last transactions before the next checkpoint (SQLite's documented
/// trade-off). One process at a time should serve a file; use ``PostgresStorage`` to run
/// several.
public final class SQLiteStorage: ResolverStorage {
  public let path: String
  private let pool: DatabasePool
  private let batcher: TransactionBatcher
  /// Runs the batcher's writes; closed and awaited by ``shutdown()`` (or closed by `deinit`),
  /// the batcher draining its queue first.
  private let writer = WorkGroup()

  /// Opens (creating if needed) the database at `path` and brings its schema up to date.
  ///
  /// The file holds device secrets, identity keys and messages, so only its owner may read
  /// it: a folder this creates is `0700`, the file `0600`, and an existing file (with its
  /// write-ahead log and shared-memory index) is set to `0600` (SQLite gives the log and the
  /// index the file's mode).
  /// - Throws: ``SQLStorageError/badDatabaseURL(_:)`` if the folder or the file cannot be made
  ///   or restricted; the database's errors (not a SQLite file, locked, schema too new).
  public init(path: String, logger: Logger = Logger(label: "nearby.storage")) throws {
    self.path = path
    try Self.createPrivately(path)
    var configuration = Configuration()
    configuration.busyMode = .timeout(5)
    configuration.prepareDatabase { db in
      try db.execute(sql: "PRAGMA synchronous = NORMAL")
    }
    let pool = try DatabasePool(path: path, configuration: configuration)
    self.pool = pool
    try pool.write { db in try Schema.migrate(GRDBConnection(db)) }
    let hint = DeadlineHint()
    let batcher = TransactionBatcher { body in
      try await pool.write { db in try body(SQLTransaction(GRDBConnection(db), deadlineHint: hint))
      }
    }
    self.batcher = batcher
    writer.start { await batcher.run() }
    logger.info("storage ready", metadata: ["sqlite": "\(path)", "schema": "\(Schema.version)"])
  }

  public var description: String { "sqlite:\(path)" }

  /// The folder (`0700` when this makes it) and the file (`0600`, made empty if missing: SQLite
  /// takes an empty file as a new database), and `0600` for an existing log and index.
  static func createPrivately(_ path: String) throws {
    let files = FileManager.default
    let folder = URL(fileURLWithPath: path).deletingLastPathComponent()
    do {
      if !files.fileExists(atPath: folder.path) {
        try files.createDirectory(
          at: folder, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
      }
      if !files.fileExists(atPath: path) {
        guard files.createFile(atPath: path, contents: nil, attributes: [.posixPermissions: 0o600])
        else { throw CocoaError(.fileWriteUnknown) }
      }
      for file in [path, path + "-wal", path + "-shm"] where files.fileExists(atPath: file) {
        try files.setAttributes([.posixPermissions: 0o600], ofItemAtPath: file)
      }
    } catch {
      throw SQLStorageError.badDatabaseURL("cannot create \(path) for its owner alone: \(error)")
    }
  }

  public func transaction<T: Sendable>(_ body: @escaping @Sendable (SQLTransaction) throws -> T)
    async throws -> T
  {
    try await batcher.submit(body)
  }

  public func read<T: Sendable>(_ body: @escaping @Sendable (SQLTransaction) throws -> T)
    async throws
    -> T
  {
    try await pool.read { db in try body(SQLTransaction(GRDBConnection(db))) }
  }

  public func shutdown() async {
    batcher.finish()
    writer.finish()
    await writer.ended()
    try? pool.close()
  }

  deinit {
    batcher.finish()
    writer.finish()
  }

  /// The default file: `$XDG_DATA_HOME/nearby/resolver.sqlite`, or
  /// `~/.local/share/nearby/resolver.sqlite`.
  public static func defaultPath(
    environment: [String: String] = ProcessInfo.processInfo.environment
  )
    -> String
  {
    let base =
      environment["XDG_DATA_HOME"].flatMap { $0.hasPrefix("/") ? $0 : nil }
      ?? (environment["HOME"] ?? NSHomeDirectory()) + "/.local/share"
    return base + "/nearby/resolver.sqlite"
  }
}

/// A GRDB database handle inside a write transaction.
final class GRDBConnection: SQLConnection {
  private let db: Database

  init(_ db: Database) { self.db = db }

  var dialect: SQLDialect { .sqlite }

  func execute(_ sql: String, _ binds: [SQLValue]) throws {
    let statement = try db.cachedStatement(sql: sql)
    try statement.execute(arguments: StatementArguments(binds.map(\.databaseValue)))
  }

  func query(_ sql: String, _ binds: [SQLValue]) throws -> [SQLRow] {
    let statement = try db.cachedStatement(sql: sql)
    let rows = try Row.fetchAll(
      statement, arguments: StatementArguments(binds.map(\.databaseValue)))
    return rows.map { row in
      SQLRow(
        row.databaseValues.map { value in
          switch value.storage {
          case .null: .null
          case .int64(let int): .integer(int)
          case .double(let double): .real(double)
          case .string(let string): .text(string)
          case .blob(let data): .blob(Array(data))
          }
        })
    }
  }
}

extension SQLValue {
  fileprivate var databaseValue: DatabaseValue {
    switch self {
    case .null: .null
    case .integer(let value): value.databaseValue
    case .real(let value): value.databaseValue
    case .text(let value): value.databaseValue
    case .blob(let value): Data(value).databaseValue
    }
  }
}
