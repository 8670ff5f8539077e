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
    return PostgresQuery(unsafeSQL: numberedPlaceholders(sql), binds: bindings)
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

  /// A row's cells as values.
  static func row(_ row: PostgresRow) throws -> SQLRow {
    SQLRow(try row.map(value))
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

  /// The error a statement failed with, as the storage handles it: a lock not taken with
  /// `NOWAIT` is ``SQLStorageError/lockBusy``, a foreign-key violation (the one foreign key is
  /// an event's message, see `pruneEvents`) is ``SQLStorageError/raced``; both are retried.
  static func mapped(_ error: any Error) -> any Error {
    guard let error = error as? PSQLError else { return error }
    switch error.serverInfo?[.sqlState] {
    case "55P03": return SQLStorageError.lockBusy  // lock_not_available
    case "23503": return SQLStorageError.raced  // foreign_key_violation
    default: return error
    }
  }
}
