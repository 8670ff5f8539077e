import PostgresNIO
import Synchronization

/// The statements each connection of a ``PostgresStorage`` has prepared, so a statement text
/// is parsed and planned once per connection, not on every run (planning was the largest
/// part of PostgreSQL's work for a report: see docs/benchmarks.md).
///
/// A statement is prepared the first time a connection runs it with binds, and PostgreSQL's
/// inferred parameter types are read back (`pg_prepared_statements`): the prepared form is
/// used only for runs whose binds have exactly those types (a NULL fits any), so a value is
/// never read as another type; any other statement, or run, goes unnamed as before.
final class PreparedStatementCache: Sendable {
  /// What a connection knows of one statement text.
  enum Entry: Sendable {
    /// Prepared, with PostgreSQL's parameter types (`bigint`, `text`, …) in order.
    case prepared(PreparedQuery, parameterTypes: [String])
    /// Not to be prepared (a parameter of a type the store never binds).
    case unnamed
  }

  /// Entries by connection (ids grow; a closed connection's entries go when this many newer
  /// connections have some) and statement text.
  private let entries = Mutex<[PostgresConnection.ID: [String: Entry]]>([:])
  static let connectionsKept = 256

  func entry(_ connection: PostgresConnection.ID, _ sql: String) -> Entry? {
    entries.withLock { $0[connection]?[sql] }
  }

  func store(_ entry: Entry, _ connection: PostgresConnection.ID, _ sql: String) {
    entries.withLock { entries in
      entries[connection, default: [:]][sql] = entry
      if entries.count > Self.connectionsKept, let oldest = entries.keys.min() {
        entries[oldest] = nil
      }
    }
  }

  /// Forgets what a connection prepared (after PostgreSQL said a prepared statement is gone
  /// or no longer fits the schema).
  func forget(_ connection: PostgresConnection.ID) {
    entries.withLock { $0[connection] = nil }
  }

  /// PostgreSQL's name for the type of each kind of value the store binds.
  static func typeName(_ value: SQLValue) -> String? {
    switch value {
    case .null: nil
    case .integer: "bigint"
    case .real: "double precision"
    case .text: "text"
    case .blob: "bytea"
    }
  }

  /// Whether `binds` can run as the statement prepared with `parameterTypes`.
  static func fits(_ binds: [SQLValue], _ parameterTypes: [String]) -> Bool {
    guard binds.count == parameterTypes.count else { return false }
    for (bind, type) in zip(binds, parameterTypes) {
      if let name = typeName(bind), name != type { return false }
    }
    return true
  }

  /// A bind as the prepared-statement API takes it.
  static func data(_ value: SQLValue) -> PostgresData {
    switch value {
    case .null: .null
    case .integer(let value): PostgresData(int64: value)
    case .real(let value): PostgresData(double: value)
    case .text(let value): PostgresData(string: value)
    case .blob(let value): PostgresData(bytes: value)
    }
  }
}
