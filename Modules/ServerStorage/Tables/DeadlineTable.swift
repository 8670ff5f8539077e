import Core
public import Foundation
public import Resolution

/// The engine's deadlines in SQL, by time: Resolution's `DeadlineStore`, one of the
/// ``ResolutionTables``.
public final class DeadlineTable: DeadlineStore {
  let sql: any SQLConnection
  let deadlineHint: DeadlineHint?

  init(_ sql: any SQLConnection, deadlineHint: DeadlineHint?) {
    self.sql = sql
    self.deadlineHint = deadlineHint
  }

  public func schedule(_ deadline: Deadline) throws {
    let (kind, subject) = DeadlineText.encode(deadline.kind)
    try sql.execute(
      "INSERT INTO deadlines (due_at, kind, subject) VALUES (?, ?, ?)",
      [SQLValue(deadline.at), .text(kind), .text(subject)])
    deadlineHint?.lower(to: deadline.at)
  }

  public func popDeadline(dueAt now: Date) throws -> Deadline? {
    if sql.dialect == .postgres {
      // Several instances sweep at once: each takes a deadline no other is handling.
      return try sql.queryFirst(
        """
        DELETE FROM deadlines WHERE id = (
          SELECT id FROM deadlines WHERE due_at <= ? ORDER BY due_at, id LIMIT 1
          FOR UPDATE SKIP LOCKED)
        RETURNING id, due_at, kind, subject
        """, [SQLValue(now)]
      ).map { row in
        Deadline(
          at: Date(timeIntervalSince1970: try row.real(1)),
          kind: try DeadlineText.decode(kind: row.text(2), subject: row.text(3)))
      }
    }
    guard
      let row = try sql.queryFirst(
        "SELECT id, due_at, kind, subject FROM deadlines WHERE due_at <= ? ORDER BY due_at, id LIMIT 1",
        [SQLValue(now)])
    else { return nil }
    try sql.execute("DELETE FROM deadlines WHERE id = ?", [.integer(try row.integer(0))])
    return Deadline(
      at: Date(timeIntervalSince1970: try row.real(1)),
      kind: try DeadlineText.decode(kind: row.text(2), subject: row.text(3)))
  }

  public func nextDeadline() throws -> Date? {
    try sql.queryFirst("SELECT MIN(due_at) FROM deadlines", []).flatMap {
      try $0.optionalReal(0).map(Date.init(timeIntervalSince1970:))
    }
  }
}
