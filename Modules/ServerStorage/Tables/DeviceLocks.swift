@_spi(Resolver) public import Core
public import Foundation
@_spi(Resolver) public import Resolution

/// Which devices a unit of the engine's work can change, so that on PostgreSQL a transaction
/// locks exactly those rows, all at once and in id order, before the engine runs: transactions
/// about other devices run beside it, on this instance or another, and two transactions never
/// wait for each other in a circle. The engine changes a device's row (usage, revision, event
/// sequence) and the rows keyed by it (handles, sightings, deliveries to its subscriptions,
/// its events) only for devices in these sets.
///
/// On SQLite every method returns at once: its single writer already serializes transactions.
public struct DeviceLocks {
  let tables: ResolutionTables

  init(_ tables: ResolutionTables) { self.tables = tables }

  /// Locks the rows of `ids` until the transaction ends (PostgreSQL: one `SELECT … ORDER BY id
  /// FOR UPDATE`, so every transaction takes its locks in the same order; SQLite: nothing to
  /// do, its one writer excludes everyone) and keeps what it read for this transaction.
  /// Devices that do not exist are remembered as absent.
  /// - Parameter waiting: false for locks taken out of order (after others): then a row
  ///   another transaction holds is not waited for (`NOWAIT`).
  /// - Throws: ``SQLStorageError/lockBusy`` when not `waiting` and a row is held; the
  ///   database's error.
  package func lockDevices(_ ids: some Collection<DeviceID>, waiting: Bool = true) throws {
    guard tables.sql.dialect == .postgres, !ids.isEmpty else { return }
    let list = StatementShapes.inList(ids.map { .text($0.description) })
    let rows = try tables.sql.query(
      """
      SELECT \(DeviceRows.columns()) FROM devices
      WHERE id IN (\(list.marks)) ORDER BY id FOR UPDATE\(waiting ? "" : " NOWAIT")
      """, list.binds)
    for id in ids { tables.cache.devices[id] = .some(nil) }
    for row in rows {
      let record = try DeviceRows.record(from: row)
      tables.cache.devices[record.id] = record
    }
  }

  /// Prepares the transaction for a report by `device`: reads in one statement each what the
  /// engine will ask about the report's sightings (the tokens' bindings, the reporter's last
  /// sightings of those devices, the devices' rows), so it does not ask once per sighting; and
  /// on PostgreSQL locks what the report can change: the device; when the report adds or
  /// removes handles, its neighbours and the subscribers of the publications it withdraws;
  /// and the devices its sightings name, except where the sighting refreshes one that is
  /// still fresh. A token counts as bound if it was at `earliestHeard` (the engine resolves a
  /// sighting for the time it was heard).
  ///
  /// With the reporting device locked its sightings change only in this transaction, so a
  /// sighting fresh now stays fresh, and refreshing it writes only the sighting's own row:
  /// reports of devices that keep hearing each other do not wait for one another. A device
  /// heard anew is locked after the reporter, out of id order, so with `NOWAIT`: when another
  /// transaction holds it this throws ``SQLStorageError/lockBusy``, the transaction is run
  /// again, and the caller passes `cautious: true`, which locks every heard device up front,
  /// in order, waiting (never in a circle).
  ///
  /// The neighbours are read before the lock and again after it: a sighting made in between
  /// by another transaction (which held this device's lock, so it has committed) adds a
  /// neighbour, locked then; with this device locked no other can appear.
  /// - Throws: ``SQLStorageError/lockBusy``, or the database's error.
  @_spi(Resolver) public func prepare(
    forReport report: Report, from device: DeviceID, now: Date, lostAfter: Duration,
    earliestHeard: Date, cautious: Bool
  ) throws {
    let postgres = tables.sql.dialect == .postgres
    let changesHandles =
      !report.publish.isEmpty || !report.unpublish.isEmpty || !report.subscribe.isEmpty
    var locked: Set<DeviceID> = [device]
    if postgres {
      if changesHandles {
        locked.formUnion(try tables.proximity.neighbors(of: device))
        for publication in report.unpublish {
          locked.formUnion(try subscribers(of: publication))
        }
      }
      if cautious {
        // Every device the sightings name, locked with the rest, in order.
        let tokens = Set(report.sightings.map(\.token.value))
        if !tokens.isEmpty {
          let list = StatementShapes.inList(tokens.map { SQLValue(bits: $0) })
          // Only devices of the reporter's project: another project's token names no one
          // here, and its device is not locked (a report cannot hold up another project).
          for row in try tables.sql.query(
            """
            SELECT t.device FROM tokens t JOIN devices d ON d.id = t.device
            WHERE t.token IN (\(list.marks)) AND t.valid_until > ?
              AND d.project = (SELECT project FROM devices WHERE id = ?)
            """,
            list.binds + [SQLValue(earliestHeard), .text(device.description)])
          {
            locked.insert(try identifier(row.text(0)))
          }
        }
      }
      try lockDevices(locked)
      if changesHandles {
        let late = Set(try tables.proximity.neighbors(of: device)).subtracting(locked)
        if !late.isEmpty {
          try lockDevices(late, waiting: false)
          locked.formUnion(late)
        }
      }
    }
    guard !report.sightings.isEmpty else { return }
    // One statement for what the engine asks about each sighting: the token's binding, the
    // device it names, and the reporter's last sightings of that device (read after the
    // reporter's lock: from then on only this transaction changes them).
    let tokens = Set(report.sightings.map(\.token.value))
    for token in tokens { tables.cache.bindings[token] = .some(nil) }
    let mediums = Set(report.sightings.map(\.medium.rawValue))
    var heardBy: [UInt64: DeviceID] = [:]
    var readRows: [DeviceID: DeviceRecord?] = [:]
    var times: [ProximityKey: Date] = [:]
    let list = StatementShapes.inList(tokens.map { SQLValue(bits: $0) })
    for row in try tables.sql.query(
      """
      SELECT t.token, t.device, t.valid_until, s.medium, s.seen_at,
        \(DeviceRows.columns(prefix: "d."))
      FROM tokens t
      LEFT JOIN sightings s ON s.hearer = ? AND s.heard = t.device
      LEFT JOIN devices d ON d.id = t.device
      WHERE t.token IN (\(list.marks))
      """, [.text(device.description)] + list.binds)
    {
      let token = UInt64(bitPattern: try row.integer(0))
      let other: DeviceID = try identifier(row.text(1))
      let until = Date(timeIntervalSince1970: try row.real(2))
      tables.cache.bindings[token] = (other, until)
      // Bound when the oldest sighting the engine accepts was heard: the engine may resolve it.
      if until > earliestHeard { heardBy[token] = other }
      if let medium = try row.optionalInteger(3), let seen = try row.optionalReal(4) {
        let key = ProximityKey(
          hearer: device, heard: other,
          medium: .init(rawValue: UInt32(truncatingIfNeeded: medium)))
        times[key] = Date(timeIntervalSince1970: seen)
      }
      readRows[other] =
        try row.optionalText(5) == nil
        ? .some(nil) : DeviceRows.record(from: SQLRow(Array(row.values[5...])))
    }
    // Another project's devices name no one for this reporter: not locked, not read further.
    let project = try tables.devices.device(device)?.project
    heardBy = heardBy.filter { (readRows[$0.value] ?? nil)?.project == project }
    let heard = Set(heardBy.values).subtracting([device])
    guard !heard.isEmpty else { return }
    for other in heard {
      for medium in mediums {
        let key = ProximityKey(hearer: device, heard: other, medium: .init(rawValue: medium))
        tables.cache.sightingTimes[key] = times[key]
      }
    }
    let unlocked = heard.subtracting(locked)
    let freshFor = Self.freshFor(lostAfter)
    var needed: Set<DeviceID> = []
    for sighting in report.sightings {
      guard let other = heardBy[sighting.token.value], unlocked.contains(other) else { continue }
      let key = ProximityKey(hearer: device, heard: other, medium: sighting.medium)
      if let last = tables.cache.sightingTimes[key] ?? nil, now.timeIntervalSince(last) < freshFor {
        continue
      }
      needed.insert(other)
    }
    if postgres, !needed.isEmpty { try lockDevices(needed, waiting: false) }
    // The rest is only read (does the device exist?): keep what the statement above read.
    for other in unlocked.subtracting(needed) where tables.cache.devices[other] == nil {
      tables.cache.devices[other] = readRows[other] ?? .some(nil)
    }
  }

  /// How close to a boundary the engine decides on times (a sighting's freshness, a
  /// binding's end, a token's expiry) that a judgement made ahead of it, in another
  /// arithmetic (seconds since 1970 in SQL, `Date` in the engine), is not trusted: one
  /// millisecond. Within it a sighting counts as new and a report takes the general path.
  static let timeMargin = 0.001

  /// How old a sighting may be to count as fresh when judged ahead of the engine: its
  /// `lostAfter` less ``timeMargin``, so a sighting on the edge is treated as new (its device
  /// locked, its report run by the engine), never the other way round.
  static func freshFor(_ lostAfter: Duration) -> Double { lostAfter.seconds - timeMargin }

  /// Locks what unregistering `device` can change: the device, its neighbours and the
  /// subscribers of its publications.
  /// - Throws: the database's error.
  @_spi(Resolver) public func lockDevices(forUnregistering device: DeviceID) throws {
    guard tables.sql.dialect == .postgres else { return }
    var ids: Set<DeviceID> = [device]
    ids.formUnion(try tables.proximity.neighbors(of: device))
    for publication in try tables.handles.publications(on: device) {
      ids.formUnion(try subscribers(of: publication.id))
    }
    try lockDevices(ids)
  }

  /// Locks what handling `deadline` can change: both devices of a sighting gone stale; a publication's
  /// device and its subscribers; a subscription's device; nothing for a token (its binding row
  /// is the deadline's own).
  /// - Throws: the database's error.
  @_spi(Resolver) public func lockDevices(for deadline: Deadline, now: Date, lostAfter: Duration)
    throws
  {
    guard tables.sql.dialect == .postgres else { return }
    var ids: Set<DeviceID> = []
    switch deadline.kind {
    case .proximity(let key):
      // A sighting still fresh is only scheduled again: nothing of either device changes.
      // (Its time only grows, or the row goes; the engine reads it again either way.)
      if let last = try tables.proximity.lastSighting(key),
        last.addingTimeInterval(lostAfter.seconds) > now
      {
        return
      }
      ids = [key.hearer, key.heard]
    case .publicationExpiry(let id):
      if let record = try tables.handles.publication(id) { ids.insert(record.device) }
      ids.formUnion(try subscribers(of: id))
    case .subscriptionExpiry(let id):
      if let record = try tables.handles.subscription(id) { ids.insert(record.device) }
    case .tokenRetirement: return
    }
    try lockDevices(ids)
    if case .publicationExpiry(let id) = deadline.kind {
      // A delivery made before the owner's lock was taken: its subscriber is locked now.
      let late = Set(try subscribers(of: id)).subtracting(ids)
      if !late.isEmpty { try lockDevices(late, waiting: false) }
    }
  }

  /// The devices whose subscriptions `publication` is delivered to.
  private func subscribers(of publication: PublicationID) throws -> [DeviceID] {
    try tables.sql.query(
      """
      SELECT DISTINCT s.device FROM deliveries d JOIN subscriptions s ON s.id = d.subscription
      WHERE d.publication = ?
      """, [.text(publication.description)]
    ).map { try identifier($0.text(0)) }
  }
}
