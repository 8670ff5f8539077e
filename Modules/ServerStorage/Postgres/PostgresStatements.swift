import NIOCore
import PostgresNIO

/// What the synchronous and the asynchronous paths to PostgreSQL share: a statement with `?`
/// placeholders and ``SQLValue`` binds as a `PostgresQuery`, a result cell as a ``SQLValue``,
/// and the server's errors the storage handles itself.
final class PostgresStatements {
  /// `?` placeholders rewritten as `$1, $2, …`, by statement text (few texts: see
  /// `StatementShapes`).
  private var numbered: [String: String] = [:]

  /// The statement with numbered placeholders and its binds.
  func query(_ sql: String, _ binds: [SQLValue]) -> PostgresQuery {
    PostgresQuery(unsafeSQL: numberedPlaceholders(sql), binds: Self.bindings(binds))
  }

  /// The binds as PostgresNIO's bindings (their types go with them).
  static func bindings(_ binds: [SQLValue]) -> PostgresBindings {
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
    return bindings
  }

  /// The text with `?` placeholders numbered `$1, $2, …`.
  func numberedPlaceholders(_ sql: String) -> String {
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

  /// A row's cells as values.
  /// - Parameter binary: the bytes are in the binary format whatever the cells say.
  static func row(_ row: PostgresRow, binary: Bool = false) throws -> SQLRow {
    SQLRow(
      try row.map { cell in
        var cell = cell
        if binary { cell.format = .binary }
        return try value(cell)
      })
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

  /// The SQLSTATE of an error the server sent, whichever of PostgresNIO's error types carries
  /// it (its prepared-statement API still hands on the older `PostgresError`).
  static func sqlState(of error: any Error) -> String? {
    if let error = error as? PSQLError { return error.serverInfo?[.sqlState] }
    if let error = error as? PostgresError, case .server = error { return error.code.raw }
    return nil
  }

  /// The error a statement failed with, as the storage handles it: a lock not taken with
  /// `NOWAIT` is ``SQLStorageError/lockBusy``, a foreign-key violation (the one foreign key is
  /// an event's message, see `pruneEvents`) is ``SQLStorageError/raced``; both are retried.
  static func mapped(_ error: any Error) -> any Error {
    switch sqlState(of: error) {
    case "55P03": SQLStorageError.lockBusy  // lock_not_available
    case "23503": SQLStorageError.raced  // foreign_key_violation
    default: error
    }
  }
}
