public import Foundation

/// Console sessions, keyed by project and a session id (a digest of the cookie's random
/// nonce, so the table alone cannot make a cookie).
public struct ConsoleSessions {
  let sql: any SQLConnection

  init(_ sql: any SQLConnection) {
    self.sql = sql
  }

  /// Stores a new session, and removes the project's sessions that have ended (expired, or
  /// idle for `idleTimeout`).
  public func createConsoleSession(
    project: String, id: String, keyID: String, now: Date, expiresAt: Date,
    idleTimeout: TimeInterval
  ) throws {
    try sql.execute(
      """
      DELETE FROM console_sessions
      WHERE project = ? AND (expires_at <= ? OR last_seen_at <= ?)
      """, [.text(project), SQLValue(now), SQLValue(now.addingTimeInterval(-idleTimeout))])
    try sql.execute(
      """
      INSERT INTO console_sessions (project, id, key_id, created_at, last_seen_at, expires_at)
      VALUES (?, ?, ?, ?, ?, ?)
      """,
      [
        .text(project), .text(id), .text(keyID), SQLValue(now), SQLValue(now),
        SQLValue(expiresAt),
      ])
  }

  /// The stored session, if it was not ended.
  public func consoleSession(project: String, id: String) throws -> ConsoleSessionRecord? {
    try sql.queryFirst(
      """
      SELECT key_id, last_seen_at, expires_at FROM console_sessions WHERE project = ? AND id = ?
      """, [.text(project), .text(id)]
    ).map {
      ConsoleSessionRecord(
        keyID: try $0.text(0), lastSeenAt: Date(timeIntervalSince1970: try $0.real(1)),
        expiresAt: Date(timeIntervalSince1970: try $0.real(2)))
    }
  }

  /// Notes that the session was used at `now`.
  public func touchConsoleSession(project: String, id: String, now: Date) throws {
    try sql.execute(
      "UPDATE console_sessions SET last_seen_at = ? WHERE project = ? AND id = ?",
      [SQLValue(now), .text(project), .text(id)])
  }

  /// Ends the session (signing out).
  public func endConsoleSession(project: String, id: String) throws {
    try sql.execute(
      "DELETE FROM console_sessions WHERE project = ? AND id = ?", [.text(project), .text(id)])
  }

  /// Ends every session signed in with the key (revoking it).
  public func endConsoleSessions(keyID: String) throws {
    try sql.execute("DELETE FROM console_sessions WHERE key_id = ?", [.text(keyID)])
  }
}
