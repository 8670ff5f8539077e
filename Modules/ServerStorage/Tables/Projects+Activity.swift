@_spi(Resolver) import Core
public import Foundation

/// What a project's devices did lately, for the web console: how many were seen, and their
/// found and lost events in the order they were logged.
extension Projects {
  /// How many of the project's devices reported a sighting at or after `since`.
  public func devicesSeen(project: String, since: Date) throws -> Int {
    let row = try sql.queryFirst(
      """
      SELECT COUNT(DISTINCT s.hearer) FROM sightings s JOIN devices d ON d.id = s.hearer
      WHERE d.project = ? AND s.seen_at >= ?
      """, [.text(project), SQLValue(since)])
    return Int(try row?.integer(0) ?? 0)
  }

  /// The project's found and lost events logged at or after `since`, oldest first, at most
  /// `limit` (subscription and publication expiries are left out).
  public func projectEvents(project: String, since: Date, limit: Int) throws -> [ProjectEvent] {
    try sql.query(
      """
      SELECT e.created_at, e.device, e.sequence, e.body, m.namespace, m.type, length(m.content)
      FROM events e JOIN devices d ON d.id = e.device JOIN messages m ON m.digest = e.message
      WHERE d.project = ? AND e.created_at >= ?
      ORDER BY e.created_at, e.device, e.sequence LIMIT ?
      """, [.text(project), SQLValue(since), .integer(Int64(limit))]
    ).map { row in
      let found =
        switch try coding.decode(StoredMessageEvent.self, row.text(3)) {
        case .found: true
        case .lost: false
        }
      return ProjectEvent(
        createdAt: Date(timeIntervalSince1970: try row.real(0)), device: try row.text(1),
        sequence: UInt64(bitPattern: try row.integer(2)), found: found,
        namespace: try row.text(4), type: try row.text(5), contentBytes: Int(try row.integer(6)))
    }
  }
}
