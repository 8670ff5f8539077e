public import Core
public import Foundation
public import Resolution

/// When each device last heard another, on each medium, in SQL: Resolution's
/// `ProximityStore`, one of the ``ResolutionTables``.
///
/// A sighting recorded is written with the others of the transaction, in one statement,
/// before anything reads the table and when the transaction's work is done.
public final class SightingTable: ProximityStore {
  let sql: any SQLConnection
  let cache: ResolutionCache

  init(_ sql: any SQLConnection, cache: ResolutionCache) {
    self.sql = sql
    self.cache = cache
  }

  public func lastSighting(_ key: ProximityKey) throws -> Date? {
    if let known = cache.sightingTimes[key] { return known }
    try writePendingSightings()
    let time = try sql.queryFirst(
      "SELECT seen_at FROM sightings WHERE hearer = ? AND heard = ? AND medium = ?",
      key.sqlValues
    ).map { Date(timeIntervalSince1970: try $0.real(0)) }
    cache.sightingTimes[key] = time
    return time
  }

  public func recordSighting(_ key: ProximityKey, at time: Date) throws -> Date? {
    let previous = try lastSighting(key)
    cache.pendingSightings[key] = time
    cache.sightingTimes[key] = time
    return previous
  }

  public func removeSighting(_ key: ProximityKey) throws {
    try writePendingSightings()
    cache.sightingTimes[key] = .some(nil)
    try sql.execute(
      "DELETE FROM sightings WHERE hearer = ? AND heard = ? AND medium = ?", key.sqlValues)
  }

  /// Writes the sightings recorded but not yet written, in statements of a bounded size.
  func writePendingSightings() throws {
    guard !cache.pendingSightings.isEmpty else { return }
    // Rows keyed by a device this transaction holds (or, on SQLite, the only writer): no
    // other transaction writes them, so their order does not matter.
    let pending = Array(cache.pendingSightings)
    cache.pendingSightings = [:]
    var start = 0
    for size in StatementShapes.chunks(pending.count) {
      var binds: [SQLValue] = []
      binds.reserveCapacity(size * 4)
      for (key, time) in pending[start..<start + size] {
        binds += key.sqlValues + [SQLValue(time)]
      }
      let values = Array(repeating: "(?, ?, ?, ?)", count: size).joined(separator: ", ")
      try sql.execute(
        """
        INSERT INTO sightings (hearer, heard, medium, seen_at) VALUES \(values)
        ON CONFLICT (hearer, heard, medium) DO UPDATE SET seen_at = excluded.seen_at
        """, binds)
      start += size
    }
  }

  public func neighbors(of device: DeviceID) throws -> [DeviceID] {
    try writePendingSightings()
    return try sql.query(
      """
      SELECT heard FROM sightings WHERE hearer = ?
      UNION SELECT hearer FROM sightings WHERE heard = ?
      """, [.text(device.description), .text(device.description)]
    ).map { try identifier($0.text(0)) }.sorted { $0.identifier < $1.identifier }
  }
}

extension ProximityKey {
  /// The key's columns (`hearer`, `heard`, `medium`), in that order.
  var sqlValues: [SQLValue] {
    [.text(hearer.description), .text(heard.description), .integer(Int64(medium))]
  }
}
