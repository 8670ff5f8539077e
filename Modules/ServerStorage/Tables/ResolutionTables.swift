import Core
import Foundation
public import Resolution

/// The resolution engine's state in SQL: Resolution's `ResolutionStore` over one
/// ``SQLTransaction``, so the server runs the same engine as the in-process resolver.
///
/// Each part is a table type of its own over the same connection. They share one cache of
/// what the transaction read (devices, token bindings, sighting times) and the sightings it
/// recorded, written together before anything reads the table and when the transaction's
/// work is done (``SQLTransaction/finish()``). Used only inside its transaction, on the
/// storage's thread.
public final class ResolutionTables: ResolutionStore {
  let sql: any SQLConnection
  /// What this transaction read and the sightings it has yet to write, shared by the tables.
  let cache = ResolutionCache()
  /// Devices and their token bindings.
  public let devices: DeviceTable
  /// Publications and subscriptions.
  public let handles: HandleTables
  /// The sightings.
  public let proximity: SightingTable
  /// Which publications are delivered to which subscriptions.
  public let deliveries: DeliveryTable
  /// The engine's deadlines.
  public let deadlines: DeadlineTable

  init(_ sql: any SQLConnection, coding: SQLCoding, deadlineHint: DeadlineHint?) {
    self.sql = sql
    devices = DeviceTable(sql, cache: cache)
    handles = HandleTables(sql, coding: coding)
    proximity = SightingTable(sql, cache: cache)
    deliveries = DeliveryTable(sql, coding: coding)
    deadlines = DeadlineTable(sql, deadlineHint: deadlineHint)
  }

  // MARK: Counts

  public func counts() throws -> ResolutionCounts {
    try proximity.writePendingSightings()
    func count(_ table: String) throws -> Int {
      Int(try sql.queryFirst("SELECT COUNT(*) FROM \(table)", [])?.integer(0) ?? 0)
    }
    var counts = ResolutionCounts()
    counts.devices = try count("devices")
    counts.tokens = try count("tokens")
    counts.publications = try count("publications")
    counts.subscriptions = try count("subscriptions")
    counts.deliveries = try count("deliveries")
    counts.sightings = try count("sightings")
    counts.deadlines = try count("deadlines")
    return counts
  }
}

/// What one transaction's ``ResolutionTables`` read and the sightings they recorded but have not
/// written. The tables live for one transaction (one savepoint of a batch), so nothing here goes
/// stale.
final class ResolutionCache {
  /// Devices read or written in this transaction (`.some(nil)`: known to be absent).
  var devices: [DeviceID: DeviceRecord?] = [:]
  /// Token bindings read in this transaction (`.some(nil)`: no binding).
  var bindings: [UInt64: (device: DeviceID, until: Date)?] = [:]
  /// Last sighting times read or written in this transaction (`.some(nil)`: none).
  var sightingTimes: [ProximityKey: Date?] = [:]
  /// Sightings recorded but not yet written: written together, in one statement, before
  /// anything reads the table and when the transaction's work is done.
  var pendingSightings: [ProximityKey: Date] = [:]
}
