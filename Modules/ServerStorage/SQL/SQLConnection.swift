/// Which SQL the connection speaks; the schema differs in a few type names.
public enum SQLDialect: String, Sendable, Hashable {
  case sqlite
  case postgres
}

/// One database connection inside one transaction, used synchronously from the storage's own
/// thread. Statements use `?` placeholders in both dialects (the PostgreSQL connection
/// numbers them).
///
/// Implementations: ``SQLiteStorage``'s (over GRDB) and ``PostgresStorage``'s (over
/// PostgresNIO, waiting for each answer on a thread of its blocking pool).
public protocol SQLConnection: AnyObject {
  var dialect: SQLDialect { get }
  /// Runs a statement that returns no rows.
  /// - Throws: the driver's error, or ``SQLStorageError``.
  func execute(_ sql: String, _ binds: [SQLValue]) throws
  /// Runs a query and returns every row.
  /// - Throws: the driver's error, or ``SQLStorageError``.
  func query(_ sql: String, _ binds: [SQLValue]) throws -> [SQLRow]
  /// Runs `body` inside a savepoint: its changes are kept if it returns and undone if it
  /// throws; the transaction goes on either way.
  func savepoint<T>(_ body: () throws -> T) throws -> T
}

extension SQLConnection {
  public func execute(_ sql: String) throws { try execute(sql, []) }

  /// A savepoint with SQL statements (both dialects speak them).
  public func savepoint<T>(_ body: () throws -> T) throws -> T {
    try execute("SAVEPOINT nearby_item")
    do {
      let result = try body()
      try execute("RELEASE SAVEPOINT nearby_item")
      return result
    } catch {
      try execute("ROLLBACK TO SAVEPOINT nearby_item")
      try execute("RELEASE SAVEPOINT nearby_item")
      throw error
    }
  }

  /// The first row, if any.
  public func queryFirst(_ sql: String, _ binds: [SQLValue]) throws -> SQLRow? {
    try query(sql, binds).first
  }
}

/// Failures of the SQL storage that are not the driver's own.
public enum SQLStorageError: Error, Sendable, Hashable, CustomStringConvertible {
  /// A column held a value of an unexpected kind, or a stored record did not decode.
  case unexpectedValue(String)
  /// The database URL or path could not be used; the text says why and what works.
  case badDatabaseURL(String)
  /// The first connection to the database failed (unreachable, TLS refused or the server's
  /// certificate not trusted, authentication); the text says why, never with a password.
  case cannotConnect(String)
  /// The database's schema is newer than this program knows.
  case schemaTooNew(found: Int, known: Int)
  /// The storage was shut down.
  case shutDown
  /// A row the transaction wanted to lock without waiting was held by another transaction;
  /// the storage runs the transaction again.
  case lockBusy
  /// A row this transaction relied on was changed by one that committed meanwhile (on
  /// PostgreSQL: a stored message deleted by a prune while an event was appended, or the
  /// other way round); the storage runs the transaction again.
  case raced

  public var description: String {
    switch self {
    case .unexpectedValue(let why): "unexpected value in the database: \(why)"
    case .badDatabaseURL(let why): "bad --database: \(why)"
    case .cannotConnect(let why): "cannot connect to the database: \(why)"
    case .schemaTooNew(let found, let known):
      "the database has schema version \(found), newer than this program's \(known); "
        + "upgrade nearby"
    case .shutDown: "the storage has been shut down"
    case .lockBusy: "a row was locked by another transaction"
    case .raced: "a row was changed by another transaction"
    }
  }
}
