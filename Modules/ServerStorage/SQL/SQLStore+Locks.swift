@_spi(Resolver) public import Core
@_spi(Resolver) public import Resolution

/// Which devices a unit of the engine's work can change, so that on PostgreSQL a transaction
/// locks exactly those rows, all at once and in id order, before the engine runs: transactions
/// about other devices run beside it, on this instance or another, and two transactions never
/// wait for each other in a circle. The engine changes a device's row (usage, revision, event
/// sequence) and the rows keyed by it (handles, sightings, deliveries to its subscriptions,
/// its events) only for devices in these sets.
///
/// On SQLite every method returns at once: its single writer already serializes transactions.
extension SQLStore {
  /// Locks what a report by `device` can change: the device, the devices its sightings' tokens
  /// name, and, when the report adds or removes handles, its neighbours and the subscribers
  /// of the publications it withdraws.
  ///
  /// The neighbours are read before the lock and again after it: a sighting made in between
  /// by another transaction (which held this device's lock, so it has committed) adds a
  /// neighbour, locked then; with this device locked no other can appear.
  /// - Throws: the database's error.
  @_spi(Resolver) public func lockDevices(forReport report: Report, from device: DeviceID) throws {
    guard sql.dialect == .postgres else { return }
    var ids: Set<DeviceID> = [device]
    if !report.sightings.isEmpty {
      let tokens = Set(report.sightings.map(\.token.value))
      let placeholders = Array(repeating: "?", count: tokens.count).joined(separator: ", ")
      for row in try sql.query(
        "SELECT DISTINCT device FROM tokens WHERE token IN (\(placeholders))",
        tokens.map { SQLValue(bits: $0) })
      {
        ids.insert(try identifier(row.text(0)))
      }
    }
    let changesHandles =
      !report.publish.isEmpty || !report.unpublish.isEmpty || !report.subscribe.isEmpty
    if changesHandles {
      ids.formUnion(try neighbors(of: device))
      for publication in report.unpublish { ids.formUnion(try subscribers(of: publication)) }
    }
    try lockDevices(ids)
    if changesHandles {
      let late = Set(try neighbors(of: device)).subtracting(ids)
      if !late.isEmpty { try lockDevices(late) }
    }
  }

  /// Locks what unregistering `device` can change: the device, its neighbours and the
  /// subscribers of its publications.
  /// - Throws: the database's error.
  @_spi(Resolver) public func lockDevices(forUnregistering device: DeviceID) throws {
    guard sql.dialect == .postgres else { return }
    var ids: Set<DeviceID> = [device]
    ids.formUnion(try neighbors(of: device))
    for publication in try publications(on: device) {
      ids.formUnion(try subscribers(of: publication.id))
    }
    try lockDevices(ids)
  }

  /// Locks what handling `deadline` can change: both devices of a sighting; a publication's
  /// device and its subscribers; a subscription's device; nothing for a token (its binding row
  /// is the deadline's own).
  /// - Throws: the database's error.
  @_spi(Resolver) public func lockDevices(for deadline: Deadline) throws {
    guard sql.dialect == .postgres else { return }
    var ids: Set<DeviceID> = []
    switch deadline.kind {
    case .proximity(let key): ids = [key.hearer, key.heard]
    case .publicationExpiry(let id):
      if let record = try publication(id) { ids.insert(record.device) }
      ids.formUnion(try subscribers(of: id))
    case .subscriptionExpiry(let id):
      if let record = try subscription(id) { ids.insert(record.device) }
    case .tokenRetirement: return
    }
    try lockDevices(ids)
    if case .publicationExpiry(let id) = deadline.kind {
      // A delivery made before the owner's lock was taken: its subscriber is locked now.
      let late = Set(try subscribers(of: id)).subtracting(ids)
      if !late.isEmpty { try lockDevices(late) }
    }
  }

  /// The devices whose subscriptions `publication` is delivered to.
  private func subscribers(of publication: PublicationID) throws -> [DeviceID] {
    try sql.query(
      """
      SELECT DISTINCT s.device FROM deliveries d JOIN subscriptions s ON s.id = d.subscription
      WHERE d.publication = ?
      """, [.text(publication.description)]
    ).map { try identifier($0.text(0)) }
  }
}
