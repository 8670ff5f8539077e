public import Foundation

/// A value bound to a SQL statement or read from a result column. The store uses five kinds,
/// the ones both SQLite and PostgreSQL hold without loss.
public enum SQLValue: Sendable, Hashable {
  case null
  case integer(Int64)
  case real(Double)
  case text(String)
  case blob([UInt8])
}

/// One result row: its values by column position.
public struct SQLRow: Sendable, Hashable {
  public var values: [SQLValue]

  public init(_ values: [SQLValue]) { self.values = values }

  /// The integer in `column`.
  /// - Throws: ``SQLStorageError/unexpectedValue(_:)`` if it holds something else.
  public func integer(_ column: Int) throws -> Int64 {
    guard case .integer(let value) = try self[column] else { throw mismatch(column, "integer") }
    return value
  }

  /// The integer in `column`, or `nil` for SQL NULL.
  public func optionalInteger(_ column: Int) throws -> Int64? {
    if case .null = try self[column] { return nil }
    return try integer(column)
  }

  /// The number in `column` (an integer column is converted).
  public func real(_ column: Int) throws -> Double {
    switch try self[column] {
    case .real(let value): return value
    case .integer(let value): return Double(value)
    default: throw mismatch(column, "real")
    }
  }

  /// The number in `column`, or `nil` for SQL NULL.
  public func optionalReal(_ column: Int) throws -> Double? {
    if case .null = try self[column] { return nil }
    return try real(column)
  }

  public func text(_ column: Int) throws -> String {
    guard case .text(let value) = try self[column] else { throw mismatch(column, "text") }
    return value
  }

  public func optionalText(_ column: Int) throws -> String? {
    if case .null = try self[column] { return nil }
    return try text(column)
  }

  public func blob(_ column: Int) throws -> [UInt8] {
    switch try self[column] {
    case .blob(let value): return value
    // SQLite hands back an empty blob as an empty text in some paths.
    case .text(let value) where value.isEmpty: return []
    default: throw mismatch(column, "blob")
    }
  }

  /// The bytes in `column`, or `nil` for SQL NULL.
  public func optionalBlob(_ column: Int) throws -> [UInt8]? {
    if case .null = try self[column] { return nil }
    return try blob(column)
  }

  private subscript(column: Int) -> SQLValue {
    get throws {
      guard values.indices.contains(column) else {
        throw SQLStorageError.unexpectedValue("no column \(column) in a row of \(values.count)")
      }
      return values[column]
    }
  }

  private func mismatch(_ column: Int, _ expected: String) -> SQLStorageError {
    .unexpectedValue("column \(column) holds \(values[column]), expected \(expected)")
  }
}

extension SQLValue {
  /// A time as seconds since 1970.
  public init(_ date: Date) { self = .real(date.timeIntervalSince1970) }
  /// An optional time; `nil` is SQL NULL.
  public init(_ date: Date?) { self = date.map { .real($0.timeIntervalSince1970) } ?? .null }
  /// An unsigned 64-bit value, stored with the same bits as a signed one.
  public init(bits value: UInt64) { self = .integer(Int64(bitPattern: value)) }
  /// An optional text; `nil` is SQL NULL.
  public init(_ text: String?) { self = text.map { .text($0) } ?? .null }
}
