public import Foundation

/// The server instances that share the database, so that each can take its share of limits
/// meant for all of them together.
public struct ServerInstances {
  let sql: any SQLConnection

  init(_ sql: any SQLConnection) {
    self.sql = sql
  }

  /// Notes that `instance` runs at `now`, forgets instances not heard from for `window`, and
  /// answers how many run (at least 1: this one).
  /// - Throws: the database's error.
  public func heartbeat(instance: String, now: Date, window: TimeInterval = 15) throws -> Int {
    try sql.execute(
      """
      INSERT INTO server_instances (id, seen_at) VALUES (?, ?)
      ON CONFLICT (id) DO UPDATE SET seen_at = excluded.seen_at
      """, [.text(instance), SQLValue(now)])
    try sql.execute(
      "DELETE FROM server_instances WHERE seen_at < ?", [SQLValue(now.addingTimeInterval(-window))])
    let count = try sql.queryFirst("SELECT COUNT(*) FROM server_instances", [])?.integer(0) ?? 1
    return max(Int(count), 1)
  }

  /// Forgets `instance` (it is stopping): the others take its share at their next heartbeat.
  /// - Throws: the database's error.
  public func forgetInstance(_ instance: String) throws {
    try sql.execute("DELETE FROM server_instances WHERE id = ?", [.text(instance)])
  }
}
