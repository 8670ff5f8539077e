@_spi(Resolver) public import Core
public import Foundation
@_spi(Resolver) public import Resolution

/// Every event the engine addresses to a device is kept in the `events` table, numbered by the
/// device's sequence, until it is older than the retention time. Report answers carry the
/// events a report caused; the event stream replays the log from the client's last sequence
/// (`Last-Event-ID`), so a reconnect, or a server restart, loses nothing. A device can see an
/// event on both channels; the manager drops the second by its sequence number.
public struct EventLog {
  let sql: any SQLConnection
  let coding: SQLCoding
  let resolution: ResolutionTables

  init(_ sql: any SQLConnection, coding: SQLCoding, resolution: ResolutionTables) {
    self.sql = sql
    self.coding = coding
    self.resolution = resolution
  }

  /// Appends sequenced events to their devices' logs, in a few multi-row statements. The
  /// message of a found or lost event is stored once in `messages` (by its digest) and the
  /// event refers to it. On PostgreSQL it also notifies ``eventChannel`` with the devices' ids
  /// (delivered when the transaction commits, to every instance listening), so their event
  /// streams wake at once.
  @_spi(Resolver) public func appendEvents(_ events: [DeviceEvent], at time: Date) throws {
    guard !events.isEmpty else { return }
    var messages: [[UInt8]: Message] = [:]
    var rows: [(event: DeviceEvent, body: String, message: [UInt8]?)] = []
    rows.reserveCapacity(events.count)
    for event in events {
      switch event.event {
      case .found(let subscription, let message), .lost(let subscription, let message):
        let digest = SQLCoding.digest(of: message)
        messages[digest] = message
        let stored: StoredMessageEvent =
          if case .found = event.event { .found(subscription) } else { .lost(subscription) }
        rows.append((event, try coding.json(stored), digest))
      case .subscriptionExpired, .publicationExpired:
        rows.append((event, try coding.json(event.event), nil))
      }
    }
    try storeMessages(messages)
    var start = rows.startIndex
    for size in StatementShapes.chunks(rows.count) {
      var binds: [SQLValue] = []
      binds.reserveCapacity(size * 5)
      for row in rows[start..<start + size] {
        binds += [
          .text(row.event.device.description), SQLValue(bits: row.event.sequence),
          SQLValue(time), .text(row.body), row.message.map { .blob($0) } ?? .null,
        ]
      }
      let values = Array(repeating: "(?, ?, ?, ?, ?)", count: size).joined(separator: ", ")
      try sql.execute(
        "INSERT INTO events (device, sequence, created_at, body, message) VALUES \(values)",
        binds)
      start += size
    }
    if sql.dialect == .postgres {
      try notify(devices: Set(events.map(\.device)))
    }
  }

  /// Stores each message once (a message already stored is left as it is), in digest order,
  /// so two transactions storing the same messages never wait for each other in a circle.
  private func storeMessages(_ messages: [[UInt8]: Message]) throws {
    guard !messages.isEmpty else { return }
    let sorted = messages.sorted { $0.key.lexicographicallyPrecedes($1.key) }
    var start = sorted.startIndex
    for size in StatementShapes.chunks(sorted.count) {
      var binds: [SQLValue] = []
      binds.reserveCapacity(size * 4)
      for (digest, message) in sorted[start..<start + size] {
        binds += [
          .blob(digest), .text(message.namespace), .text(message.type),
          .blob(Array(message.content)),
        ]
      }
      let values = Array(repeating: "(?, ?, ?, ?)", count: size).joined(separator: ", ")
      try sql.execute(
        """
        INSERT INTO messages (digest, namespace, type, content) VALUES \(values)
        ON CONFLICT (digest) DO NOTHING
        """, binds)
      start += size
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

  /// The device's events after `sequence`, oldest first, at most `limit`, and no more than
  /// fit in `byteBudget` (message contents and event bodies counted; the first event always
  /// comes, whatever its size, so a stream never stalls). Their ids are as the device sent
  /// them (the log keeps them as stored: see ``HandleScope``).
  @_spi(Resolver) public func events(
    for device: DeviceID, after sequence: UInt64, limit: Int, byteBudget: Int = .max
  ) throws -> [SequencedEvent] {
    let logged = try loggedEvents(
      for: device, after: sequence, limit: limit, byteBudget: byteBudget)
    guard let record = try resolution.devices.device(device), let scope = HandleScope(record) else {
      return logged
    }
    return logged.map { scope($0) }
  }

  /// `events` (as the engine made them, with ids as stored) with each device's ids as the
  /// device sent them; a device that is gone keeps them as they are.
  @_spi(Resolver) public func unmasked(_ events: [DeviceEvent]) throws -> [DeviceEvent] {
    var scopes: [DeviceID: HandleScope?] = [:]
    return try events.map { event in
      if scopes[event.device] == nil {
        scopes[event.device] = .some(
          try resolution.devices.device(event.device).flatMap(HandleScope.init))
      }
      guard let scope = scopes[event.device] ?? nil else { return event }
      var unmasked = event
      unmasked.event = scope(event.event)
      return unmasked
    }
  }

  private func loggedEvents(
    for device: DeviceID, after sequence: UInt64, limit: Int, byteBudget: Int
  ) throws -> [SequencedEvent] {
    // A running sum of the sizes, in the database: the rows past the budget are never read.
    try sql.query(
      """
      SELECT sequence, body, message, namespace, type, content FROM (
        SELECT e.sequence, e.body, e.message, m.namespace, m.type, m.content,
          SUM(COALESCE(length(m.content), 0) + length(e.body))
            OVER (ORDER BY e.sequence ROWS UNBOUNDED PRECEDING)
            - COALESCE(length(m.content), 0) - length(e.body) AS before
        FROM events e LEFT JOIN messages m ON m.digest = e.message
        WHERE e.device = ? AND e.sequence > ?
        ORDER BY e.sequence LIMIT ?
      ) AS page
      WHERE before < ?
      ORDER BY sequence
      """,
      [
        .text(device.description), SQLValue(bits: sequence), .integer(Int64(limit)),
        .integer(Int64(clamping: byteBudget)),
      ]
    ).map { row in
      let sequence = UInt64(bitPattern: try row.integer(0))
      // Events logged before messages were stored apart hold their whole event.
      guard try row.optionalBlob(2) != nil else {
        return SequencedEvent(
          sequence: sequence, event: try coding.decode(ResolverEvent.self, row.text(1)))
      }
      guard let namespace = try row.optionalText(3) else {
        throw SQLStorageError.unexpectedValue("event \(sequence) of \(device): no message")
      }
      let message = Message(
        content: Data(try row.blob(5)), type: try row.text(4), namespace: namespace)
      let event: ResolverEvent =
        switch try coding.decode(StoredMessageEvent.self, row.text(1)) {
        case .found(let subscription): .found(subscription, message)
        case .lost(let subscription): .lost(subscription, message)
        }
      return SequencedEvent(sequence: sequence, event: event)
    }
  }

  /// Forgets at most `limit` events created before `time`, the oldest first; when that was
  /// the last of them (fewer than `limit`), also the messages no event refers to any more.
  /// Returns how many events.
  ///
  /// On PostgreSQL a message that a transaction appending an event holds (the foreign key's
  /// `FOR KEY SHARE` lock) is skipped, and kept for a later prune; when one is referred to
  /// by an event committed while this looked, the prune fails with
  /// ``SQLStorageError/raced`` and the storage runs it again.
  @discardableResult
  public func pruneEvents(before time: Date, limit: Int = .max) throws -> Int {
    let limit = Int64(clamping: max(limit, 1))
    let old = "SELECT device, sequence FROM events WHERE created_at < ? ORDER BY created_at LIMIT ?"
    let binds = [SQLValue(time), .integer(limit)]
    let count =
      try sql.queryFirst("SELECT COUNT(*) FROM (\(old)) AS old", binds)?.integer(0) ?? 0
    guard count > 0 else { return 0 }
    try sql.execute("DELETE FROM events WHERE (device, sequence) IN (\(old))", binds)
    if count < limit {
      let unreferenced =
        "SELECT digest FROM messages WHERE NOT EXISTS "
        + "(SELECT 1 FROM events WHERE events.message = messages.digest)"
      try sql.execute(
        sql.dialect == .postgres
          ? "DELETE FROM messages WHERE digest IN (\(unreferenced) FOR UPDATE SKIP LOCKED)"
          : "DELETE FROM messages WHERE digest IN (\(unreferenced))")
    }
    return Int(count)
  }
}
