public import Core
public import Foundation
public import Resolution
public import Tokens

/// Devices and the tokens that resolve to them, in SQL: Resolution's `DeviceStore`, one of the
/// ``ResolutionTables``.
///
/// What it reads and writes stays in the transaction's cache, so the engine asking again
/// about a device or a token costs no statement.
public final class DeviceTable: DeviceStore {
  let sql: any SQLConnection
  let cache: ResolutionCache

  init(_ sql: any SQLConnection, cache: ResolutionCache) {
    self.sql = sql
    self.cache = cache
  }

  public func device(_ id: DeviceID) throws -> DeviceRecord? {
    if let cached = cache.devices[id] { return cached }
    let record = try sql.queryFirst(
      """
      SELECT \(DeviceRows.columns()) FROM devices WHERE id = ?
      """, [.text(id.description)]
    ).map(DeviceRows.record(from:))
    cache.devices[id] = record
    return record
  }

  public func saveDevice(_ device: DeviceRecord) throws {
    cache.devices[device.id] = nil
    try sql.execute(
      """
      INSERT INTO devices (\(DeviceRows.columns()))
      VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
      ON CONFLICT (id) DO UPDATE SET project = excluded.project, secret = excluded.secret,
        token = excluded.token, token_expires_at = excluded.token_expires_at,
        usage = excluded.usage, revision = excluded.revision,
        last_event_sequence = excluded.last_event_sequence,
        last_report_at = excluded.last_report_at,
        new_neighbors_since = excluded.new_neighbors_since,
        new_neighbors = excluded.new_neighbors, scoped_handles = excluded.scoped_handles
      """,
      [
        .text(device.id.description), .text(device.project), .text(device.secretDigest),
        SQLValue(bits: device.token.value), SQLValue(device.tokenExpiresAt),
        .text(UsageText.encode(device.usage)), SQLValue(bits: device.revision),
        SQLValue(bits: device.lastEventSequence), SQLValue(device.lastReportAt),
        SQLValue(device.newNeighbors.since),
        .integer(Int64(device.newNeighbors.count)), .integer(device.scopesHandles ? 1 : 0),
      ])
    cache.devices[device.id] = device
  }

  public func removeDevice(_ id: DeviceID) throws {
    cache.devices[id] = .some(nil)
    try sql.execute("DELETE FROM devices WHERE id = ?", [.text(id.description)])
    try sql.execute("DELETE FROM events WHERE device = ?", [.text(id.description)])
  }
  public func silentDevices(before time: Date, limit: Int) throws -> [DeviceID] {
    try sql.query(
      "SELECT id FROM devices WHERE last_report_at < ? ORDER BY last_report_at LIMIT ?",
      [SQLValue(time), .integer(Int64(max(limit, 0)))]
    ).map { try identifier($0.text(0)) }
  }

  // MARK: Tokens

  public func bind(_ token: Token, to device: DeviceID, until: Date) throws {
    cache.bindings[token.value] = (device, until)
    try sql.execute(
      """
      INSERT INTO tokens (token, device, valid_until) VALUES (?, ?, ?)
      ON CONFLICT (token) DO UPDATE SET device = excluded.device,
        valid_until = excluded.valid_until
      """, [SQLValue(bits: token.value), .text(device.description), SQLValue(until)])
  }

  public func device(heard token: Token, at time: Date) throws -> DeviceID? {
    if let known = cache.bindings[token.value] {
      guard let known, known.until > time else { return nil }
      return known.device
    }
    return try sql.queryFirst(
      "SELECT device FROM tokens WHERE token = ? AND valid_until > ?",
      [SQLValue(bits: token.value), SQLValue(time)]
    ).map { try identifier($0.text(0)) }
  }

  public func binding(of token: Token) throws -> Date? {
    try sql.queryFirst(
      "SELECT valid_until FROM tokens WHERE token = ?", [SQLValue(bits: token.value)]
    ).map { Date(timeIntervalSince1970: try $0.real(0)) }
  }

  public func unbind(_ token: Token) throws {
    cache.bindings[token.value] = .some(nil)
    try sql.execute("DELETE FROM tokens WHERE token = ?", [SQLValue(bits: token.value)])
  }
}
