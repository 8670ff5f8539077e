@_spi(Resolver) public import Core
public import Foundation
@_spi(Resolver) public import Resolution

/// Every event the engine addresses to a device is kept in the `events` table, numbered by the
/// device's sequence, until it is older than the retention time. Report answers carry the
/// events a report caused; the event stream replays the log from the client's last sequence
/// (`Last-Event-ID`), so a reconnect, or a server restart, loses nothing. A device can see an
/// event on both channels; the manager drops the second by its sequence number.
extension SQLStore {
  /// Appends sequenced events to their devices' logs, in a few multi-row statements. On
  /// PostgreSQL it also notifies ``eventChannel`` with the devices' ids (delivered when the
  /// transaction commits, to every instance listening), so their event streams wake at once.
  @_spi(Resolver) public func appendEvents(_ events: [DeviceEvent], at time: Date) throws {
    guard !events.isEmpty else { return }
    var start = events.startIndex
    for size in StatementShapes.chunks(events.count) {
      let slice = events[start..<start + size]
      var binds: [SQLValue] = []
      binds.reserveCapacity(size * 4)
      for event in slice {
        binds += [
          .text(event.device.description), SQLValue(bits: event.sequence), SQLValue(time),
          .text(try json(event.event)),
        ]
      }
      let values = Array(repeating: "(?, ?, ?, ?)", count: size).joined(separator: ", ")
      try sql.execute(
        "INSERT INTO events (device, sequence, created_at, body) VALUES \(values)", binds)
      start += size
    }
    if sql.dialect == .postgres {
      try notify(devices: Set(events.map(\.device)))
    }
  }

  /// The PostgreSQL channel that carries "these devices have new events": a payload is device
  /// ids separated by spaces.
  public static let eventChannel = "nearby_events"

  /// NOTIFY payloads stay under PostgreSQL's 8 000-byte limit: at most this many ids each.
  static let devicesPerNotification = 200

  private func notify(devices: Set<DeviceID>) throws {
    let ids = devices.map(\.description)
    var start = 0
    while start < ids.count {
      let end = min(start + Self.devicesPerNotification, ids.count)
      try sql.execute(
        "SELECT pg_notify(?, ?)",
        [.text(Self.eventChannel), .text(ids[start..<end].joined(separator: " "))])
      start = end
    }
  }

  /// The device's events after `sequence`, oldest first, at most `limit`.
  @_spi(Resolver) public func events(for device: DeviceID, after sequence: UInt64, limit: Int)
    throws
    -> [SequencedEvent]
  {
    try sql.query(
      """
      SELECT sequence, body FROM events WHERE device = ? AND sequence > ?
      ORDER BY sequence LIMIT ?
      """,
      [.text(device.description), SQLValue(bits: sequence), .integer(Int64(limit))]
    ).map { row in
      SequencedEvent(
        sequence: UInt64(bitPattern: try row.integer(0)),
        event: try decode(ResolverEvent.self, row.text(1)))
    }
  }

  /// Forgets events created before `time`; returns how many.
  @discardableResult
  public func pruneEvents(before time: Date) throws -> Int {
    let count =
      try sql.queryFirst(
        "SELECT COUNT(*) FROM events WHERE created_at < ?", [SQLValue(time)])?.integer(0) ?? 0
    if count > 0 {
      try sql.execute("DELETE FROM events WHERE created_at < ?", [SQLValue(time)])
    }
    return Int(count)
  }
}
