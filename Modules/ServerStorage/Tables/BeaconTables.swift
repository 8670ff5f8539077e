public import Core
public import Foundation
public import Resolution
import Tokens

/// Beacons and attachments (contract §7), always scoped to one project: a project never sees
/// another's beacons or attachments.
public struct BeaconTables {
  let sql: any SQLConnection
  let namespaces: Namespaces
  let observations: BeaconObservations

  init(_ sql: any SQLConnection, namespaces: Namespaces, observations: BeaconObservations) {
    self.sql = sql
    self.namespaces = namespaces
    self.observations = observations
  }

  /// Registers a beacon, with its EID parameters for an Eddystone-EID beacon; nil if the
  /// project has it already.
  /// - Throws: ``BeaconInputError/overLimit(_:)`` when the project holds its most beacons (or
  ///   EID beacons), or there are more attachments than a beacon holds;
  ///   ``BeaconInputError/notOwned(_:)`` for an attachment in another project's namespace;
  ///   the database's error.
  public func registerBeacon(
    project: String, advertisedID: BeaconID, description: String,
    eid: EddystoneEIDRegistration? = nil, attachments: [NewAttachment], now: Date,
    limits: BeaconLimits = BeaconLimits(), status: BeaconStatus = .active,
    metadata: BeaconMetadata = BeaconMetadata()
  ) throws -> BeaconRecord? {
    let exists = try sql.queryFirst(
      "SELECT status FROM beacons WHERE project = ? AND name = ?",
      [.text(project), .text(advertisedID.name)])
    if let exists {
      guard try exists.text(0) != BeaconStatus.decommissioned.rawValue else {
        throw BeaconInputError.conflict(
          "beacon \(advertisedID.name) was decommissioned; its id can never be registered again")
      }
      return nil
    }
    guard status != .decommissioned else {
      throw BeaconInputError.invalid("a beacon is registered active or inactive")
    }
    try metadata.check()
    guard attachments.count <= limits.maximumAttachmentsPerBeacon else {
      throw BeaconInputError.overLimit(
        "attachments: \(attachments.count); a beacon holds at most "
          + "\(limits.maximumAttachmentsPerBeacon)")
    }
    let beacons = try count("beacons", project: project)
    guard beacons < limits.maximumBeaconsPerProject else {
      throw BeaconInputError.overLimit(
        "the project holds \(beacons) beacons, its most (\(limits.maximumBeaconsPerProject)); "
          + "delete some first")
    }
    if eid != nil {
      let eids = try count("beacon_eids", project: project)
      guard eids < limits.maximumEIDBeaconsPerProject else {
        throw BeaconInputError.overLimit(
          "the project holds \(eids) Eddystone-EID beacons, its most "
            + "(\(limits.maximumEIDBeaconsPerProject)); delete some first")
      }
    }
    try sql.execute(
      """
      INSERT INTO beacons (project, name, kind, advertised_id, description, created_at)
      VALUES (?, ?, ?, ?, ?, ?)
      """,
      [
        .text(project), .text(advertisedID.name), .text(advertisedID.kindName),
        .blob(advertisedID.bytes), .text(description), SQLValue(now),
      ])
    if let eid {
      try sql.execute(
        """
        INSERT INTO beacon_eids
          (project, beacon, identity_key, rotation_exponent, clock_value, registered_at)
        VALUES (?, ?, ?, ?, ?, ?)
        """,
        [
          .text(project), .text(advertisedID.name), .blob(eid.generator.identityKey),
          .integer(Int64(eid.generator.rotationExponent)), .integer(Int64(eid.clockValue)),
          SQLValue(eid.registeredAt),
        ])
    }
    try writeLifecycle(project: project, beacon: advertisedID.name, status, metadata)
    var record = BeaconRecord(
      project: project, advertisedID: advertisedID, description: description, createdAt: now,
      attachments: [], eid: eid, status: status, metadata: metadata)
    for attachment in attachments {
      if let added = try addAttachment(
        project: project, beacon: advertisedID.name, attachment, now: now, limits: limits)
      {
        record.attachments.append(added)
      }
    }
    return record
  }

  /// The project's beacons (all, or those with these advertised ids; `servedOnly`: the active
  /// ones only), with attachments.
  public func beacons(
    project: String, advertisedIDs: [BeaconID]? = nil, servedOnly: Bool = false
  ) throws -> [BeaconRecord] {
    let served = servedOnly ? " AND b.status = 'active'" : ""
    var rows: [SQLRow]
    if let advertisedIDs {
      rows = []
      for name in Set(advertisedIDs.map(\.name)).sorted() {
        rows += try sql.query(
          "\(Self.beaconSelect) WHERE b.project = ? AND b.name = ?\(served)",
          [.text(project), .text(name)])
      }
    } else {
      rows = try sql.query(
        "\(Self.beaconSelect) WHERE b.project = ?\(served) ORDER BY b.created_at, b.name",
        [.text(project)])
    }
    return try beaconRecords(rows, project: project)
  }

  /// The columns ``beaconRecords(_:project:)`` reads, from `beacons b` and its EID row.
  static let beaconSelect = """
    SELECT b.kind, b.advertised_id, b.description, b.created_at,
      e.identity_key, e.rotation_exponent, e.clock_value, e.registered_at,
      b.status, b.place, b.latitude, b.longitude, b.indoor_level, b.expected_stability,
      e.clock_offset, e.last_matched_at
    FROM beacons b LEFT JOIN beacon_eids e ON e.project = b.project AND e.beacon = b.name
    """

  /// Beacons from rows of ``beaconSelect``, with their properties and attachments.
  func beaconRecords(_ rows: [SQLRow], project: String) throws -> [BeaconRecord] {
    try rows.map { row in
      guard let kind = BeaconID.Kind(rawValue: try row.text(0)) else {
        throw SQLStorageError.unexpectedValue("beacon kind \(try row.text(0))")
      }
      let bytes = try row.blob(1)
      guard let id = BeaconID(kind: kind, bytes: bytes) else {
        throw SQLStorageError.unexpectedValue(
          "beacon id: a \(kind.rawValue) id is \(kind.byteCount) bytes, got \(bytes.count)")
      }
      var record = BeaconRecord(
        project: project, advertisedID: id, description: try row.text(2),
        createdAt: Date(timeIntervalSince1970: try row.real(3)), attachments: [],
        eid: try Self.eidRegistration(row, from: 4, learnedFrom: 14))
      let statusText = try row.text(8)
      guard let status = BeaconStatus(rawValue: statusText) else {
        throw SQLStorageError.unexpectedValue("beacon status \(statusText)")
      }
      record.status = status
      record.metadata.place = try row.text(9)
      record.metadata.latitude = try row.optionalReal(10)
      record.metadata.longitude = try row.optionalReal(11)
      record.metadata.indoorLevel = try row.text(12)
      record.metadata.expectedStability = try row.optionalText(13).flatMap(BeaconStability.init)
      record.metadata.properties = try properties(project: project, beacon: record.name)
      record.attachments = try attachments(project: project, beacon: record.name)
      return record
    }
  }

  /// Removes a beacon with its attachments; false if the project has no such beacon.
  /// - Throws: ``BeaconInputError/conflict(_:)`` for a decommissioned beacon: its tombstone
  ///   stays, so its id is never registered again.
  public func deleteBeacon(project: String, name: String) throws -> Bool {
    let exists = try sql.queryFirst(
      "SELECT status FROM beacons WHERE project = ? AND name = ?", [.text(project), .text(name)])
    guard let exists else { return false }
    guard try exists.text(0) != BeaconStatus.decommissioned.rawValue else {
      throw BeaconInputError.conflict(
        "beacon \(name) is decommissioned: it is kept so that its id is never registered again")
    }
    try sql.execute(
      "DELETE FROM beacon_properties WHERE project = ? AND beacon = ?",
      [.text(project), .text(name)])
    try sql.execute(
      "DELETE FROM attachments WHERE project = ? AND beacon = ?", [.text(project), .text(name)])
    try sql.execute(
      "DELETE FROM beacon_eids WHERE project = ? AND beacon = ?", [.text(project), .text(name)])
    try observations.deleteDiagnostics(project: project, beacon: name)
    try sql.execute(
      "DELETE FROM beacons WHERE project = ? AND name = ?", [.text(project), .text(name)])
    return true
  }

  /// Adds an attachment; nil if the project has no such beacon (or it is decommissioned). The
  /// project becomes the owner of the attachment's namespace if nobody owned it.
  /// - Throws: ``BeaconInputError/overLimit(_:)`` when the beacon holds its most attachments;
  ///   ``BeaconInputError/notOwned(_:)`` when another project owns the namespace; the
  ///   database's error.
  public func addAttachment(
    project: String, beacon: String, _ attachment: NewAttachment, now: Date,
    limits: BeaconLimits = BeaconLimits()
  ) throws -> AttachmentRecord? {
    let exists = try sql.queryFirst(
      "SELECT 1 FROM beacons WHERE project = ? AND name = ? AND status <> 'decommissioned'",
      [.text(project), .text(beacon)])
    guard exists != nil else { return nil }
    let held =
      try sql.queryFirst(
        "SELECT COUNT(*) FROM attachments WHERE project = ? AND beacon = ?",
        [.text(project), .text(beacon)]
      )?.integer(0) ?? 0
    guard held < limits.maximumAttachmentsPerBeacon else {
      throw BeaconInputError.overLimit(
        "beacon \(beacon) holds \(held) attachments, its most "
          + "(\(limits.maximumAttachmentsPerBeacon)); delete some first")
    }
    try namespaces.claimNamespace(project: project, name: attachment.namespace, now: now)
    var generator = SystemRandomNumberGenerator()
    let name = Hex.encode((0..<6).map { _ in UInt8.random(in: 0...255, using: &generator) })
    try sql.execute(
      """
      INSERT INTO attachments
        (project, beacon, name, namespace, type, data, created_at, max_distance_meters)
      VALUES (?, ?, ?, ?, ?, ?, ?, ?)
      """,
      [
        .text(project), .text(beacon), .text(name), .text(attachment.namespace),
        .text(attachment.type), .blob(attachment.data), SQLValue(now),
        attachment.maxDistanceMeters.map(SQLValue.real) ?? .null,
      ])
    return AttachmentRecord(
      name: name, namespace: attachment.namespace, type: attachment.type, data: attachment.data,
      createdAt: now, maxDistanceMeters: attachment.maxDistanceMeters)
  }

  /// Removes an attachment; false if there is none by that name.
  public func deleteAttachment(project: String, beacon: String, name: String) throws -> Bool {
    let exists = try sql.queryFirst(
      "SELECT 1 FROM attachments WHERE project = ? AND beacon = ? AND name = ?",
      [.text(project), .text(beacon), .text(name)])
    guard exists != nil else { return false }
    try sql.execute(
      "DELETE FROM attachments WHERE project = ? AND beacon = ? AND name = ?",
      [.text(project), .text(beacon), .text(name)])
    return true
  }

  /// The project's active Eddystone-EID beacons by name, with their parameters (for
  /// resolving observed ids).
  public func eidBeacons(project: String) throws
    -> [(name: String, registration: EddystoneEIDRegistration)]
  {
    try sql.query(
      """
      SELECT e.beacon, e.identity_key, e.rotation_exponent, e.clock_value, e.registered_at,
        e.clock_offset, e.last_matched_at
      FROM beacon_eids e JOIN beacons b ON b.project = e.project AND b.name = e.beacon
      WHERE e.project = ? AND b.status = 'active' ORDER BY e.beacon
      """, [.text(project)]
    ).compactMap { row in
      guard let registration = try Self.eidRegistration(row, from: 1, learnedFrom: 5) else {
        return nil
      }
      return (name: try row.text(0), registration: registration)
    }
  }

  /// The EID parameters in four columns from `column` (key, exponent, clock, time) and what
  /// matches taught in two from `learned` (clock offset, last match), or nil when they are
  /// NULL (a beacon of another kind, from a LEFT JOIN).
  private static func eidRegistration(_ row: SQLRow, from column: Int, learnedFrom learned: Int)
    throws -> EddystoneEIDRegistration?
  {
    guard let exponent = try row.optionalInteger(column + 1) else { return nil }
    do {
      var registration = try EddystoneEIDRegistration(
        identityKey: try row.blob(column), rotationExponent: Int(exponent),
        clockValue: UInt32(truncatingIfNeeded: try row.integer(column + 2)),
        registeredAt: Date(timeIntervalSince1970: try row.real(column + 3)))
      registration.clockOffset = try row.optionalInteger(learned) ?? 0
      registration.lastMatchedAt = try row.optionalReal(learned + 1).map(
        Date.init(timeIntervalSince1970:))
      return registration
    } catch {
      throw SQLStorageError.unexpectedValue("beacon EID parameters: \(error)")
    }
  }

  /// Stores what matches taught of EID beacons' clocks (their offset and last match), for
  /// every instance and after a restart.
  public func recordEIDMatches(
    project: String, _ matches: [(beacon: String, clockOffset: Int64, matchedAt: Date)]
  ) throws {
    for match in matches {
      try sql.execute(
        """
        UPDATE beacon_eids SET clock_offset = ?, last_matched_at = ?
        WHERE project = ? AND beacon = ?
        """,
        [
          .integer(match.clockOffset), SQLValue(match.matchedAt), .text(project),
          .text(match.beacon),
        ])
    }
  }

  func attachments(project: String, beacon: String) throws -> [AttachmentRecord] {
    try sql.query(
      """
      SELECT name, namespace, type, data, created_at, max_distance_meters FROM attachments
      WHERE project = ? AND beacon = ? ORDER BY created_at, name
      """, [.text(project), .text(beacon)]
    ).map { row in
      AttachmentRecord(
        name: try row.text(0), namespace: try row.text(1), type: try row.text(2),
        data: try row.blob(3), createdAt: Date(timeIntervalSince1970: try row.real(4)),
        maxDistanceMeters: try row.optionalReal(5))
    }
  }

  /// The rows of `table` (keyed by project first) that belong to `project`.
  private func count(_ table: String, project: String) throws -> Int {
    Int(
      try sql.queryFirst("SELECT COUNT(*) FROM \(table) WHERE project = ?", [.text(project)])?
        .integer(0) ?? 0)
  }
}
