import Core
import Foundation
import Resolution
import Tokens

/// How the `devices` table's rows are read, by the tables and by PostgreSQL's prepared
/// refresh statement alike.
enum DeviceRows {
  /// The device in a row of ``columns(prefix:)``.
  static func record(from row: SQLRow) throws -> DeviceRecord {
    var record = DeviceRecord(
      id: try identifier(row.text(0)), project: try row.text(1), secretDigest: try row.text(2),
      token: Token(value: UInt64(bitPattern: try row.integer(3))),
      tokenExpiresAt: Date(timeIntervalSince1970: try row.real(4)),
      usage: try UsageText.decode(row.text(5)))
    record.revision = UInt64(bitPattern: try row.integer(6))
    record.lastEventSequence = UInt64(bitPattern: try row.integer(7))
    record.lastReportAt = Date(timeIntervalSince1970: try row.real(8))
    record.newNeighbors = NewNeighborWindow(
      since: try row.optionalReal(9).map(Date.init(timeIntervalSince1970:)),
      count: Int(try row.integer(10)))
    record.scopesHandles = try row.integer(11) != 0
    return record
  }

  /// The columns ``record(from:)`` reads, in its order, each after `prefix`.
  static func columns(prefix: String = "") -> String {
    [
      "id", "project", "secret", "token", "token_expires_at", "usage", "revision",
      "last_event_sequence", "last_report_at", "new_neighbors_since", "new_neighbors",
      "scoped_handles",
    ].map { prefix + $0 }.joined(separator: ", ")
  }
}
