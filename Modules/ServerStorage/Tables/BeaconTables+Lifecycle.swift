import Foundation

/// The beacon lifecycle and its metadata: status changes, metadata updates, and
/// listings in pages with filters.
extension BeaconTables {
  /// One beacon of the project, nil if it has none by that name.
  public func beacon(project: String, name: String) throws -> BeaconRecord? {
    let rows = try sql.query(
      "\(Self.beaconSelect) WHERE b.project = ? AND b.name = ?", [.text(project), .text(name)])
    return try beaconRecords(rows, project: project).first
  }

  /// Writes a beacon's description, status and metadata; nil if the project has no such
  /// beacon. Decommissioning removes its attachments and EID parameters for good.
  /// - Throws: ``BeaconInputError/conflict(_:)`` for a beacon decommissioned before;
  ///   ``BeaconInputError`` for metadata over its limits.
  public func updateBeacon(
    project: String, name: String, description: String, status: BeaconStatus,
    metadata: BeaconMetadata
  ) throws -> BeaconRecord? {
    guard let current = try beacon(project: project, name: name) else { return nil }
    guard current.status != .decommissioned else {
      throw BeaconInputError.conflict("beacon \(name) is decommissioned: it never changes again")
    }
    try metadata.check()
    try sql.execute(
      "UPDATE beacons SET description = ? WHERE project = ? AND name = ?",
      [.text(description), .text(project), .text(name)])
    try writeLifecycle(project: project, beacon: name, status, metadata)
    if status == .decommissioned {
      try sql.execute(
        "DELETE FROM attachments WHERE project = ? AND beacon = ?", [.text(project), .text(name)])
      try sql.execute(
        "DELETE FROM beacon_eids WHERE project = ? AND beacon = ?", [.text(project), .text(name)])
      try observations.deleteDiagnostics(project: project, beacon: name)
    }
    return try beacon(project: project, name: name)
  }

  /// The project's beacons matching `filter`, oldest first, at most `limit` after `cursor`,
  /// and the cursor of the next page (nil on the last).
  public func listBeacons(
    project: String, filter: BeaconListFilter, after cursor: BeaconListCursor?, limit: Int
  ) throws -> (beacons: [BeaconRecord], next: BeaconListCursor?) {
    var clauses = ["b.project = ?"]
    var arguments: [SQLValue] = [.text(project)]
    if let status = filter.status {
      clauses.append("b.status = ?")
      arguments.append(.text(status.rawValue))
    }
    if let property = filter.property {
      clauses.append(
        """
        EXISTS (SELECT 1 FROM beacon_properties p WHERE p.project = b.project
          AND p.beacon = b.name AND p.property = ? AND p.value = ?)
        """)
      arguments += [.text(property.key), .text(property.value)]
    }
    if let attachment = filter.attachment {
      let typed = attachment.type == nil ? "" : " AND a.type = ?"
      clauses.append(
        """
        EXISTS (SELECT 1 FROM attachments a WHERE a.project = b.project AND a.beacon = b.name
          AND a.namespace = ?\(typed))
        """)
      arguments.append(.text(attachment.namespace))
      if let type = attachment.type { arguments.append(.text(type)) }
    }
    if let after = filter.registeredAfter {
      clauses.append("b.created_at > ?")
      arguments.append(SQLValue(after))
    }
    if let cursor {
      clauses.append("(b.created_at > ? OR (b.created_at = ? AND b.name > ?))")
      arguments += [.real(cursor.createdAt), .real(cursor.createdAt), .text(cursor.name)]
    }
    arguments.append(.integer(Int64(limit + 1)))
    let rows = try sql.query(
      """
      \(Self.beaconSelect) WHERE \(clauses.joined(separator: " AND "))
      ORDER BY b.created_at, b.name LIMIT ?
      """, arguments)
    let page = Array(rows.prefix(limit))
    let beacons = try beaconRecords(page, project: project)
    guard rows.count > limit, let last = page.last, let record = beacons.last else {
      return (beacons, nil)
    }
    return (beacons, BeaconListCursor(createdAt: try last.real(3), name: record.name))
  }

  /// A beacon's attachments of `namespace` (and `type` when given; all when `namespace` is
  /// nil); nil if the project has no such beacon.
  public func attachments(
    project: String, beacon: String, namespace: String?, type: String?
  ) throws -> [AttachmentRecord]? {
    guard try self.beacon(project: project, name: beacon) != nil else { return nil }
    return try attachments(project: project, beacon: beacon).filter {
      (namespace == nil || $0.namespace == namespace) && (type == nil || $0.type == type)
    }
  }

  /// Removes a beacon's attachments of `namespace` (and `type` when given; all when
  /// `namespace` is nil); nil if the project has no such beacon, else how many went.
  public func deleteAttachments(
    project: String, beacon: String, namespace: String?, type: String?
  ) throws -> Int? {
    guard
      let doomed = try attachments(
        project: project, beacon: beacon, namespace: namespace, type: type)
    else { return nil }
    for attachment in doomed {
      try sql.execute(
        "DELETE FROM attachments WHERE project = ? AND beacon = ? AND name = ?",
        [.text(project), .text(beacon), .text(attachment.name)])
    }
    return doomed.count
  }

  /// Writes the status and metadata columns and the properties of a beacon.
  func writeLifecycle(
    project: String, beacon: String, _ status: BeaconStatus, _ metadata: BeaconMetadata
  ) throws {
    try sql.execute(
      """
      UPDATE beacons SET status = ?, place = ?, latitude = ?, longitude = ?, indoor_level = ?,
        expected_stability = ?
      WHERE project = ? AND name = ?
      """,
      [
        .text(status.rawValue), .text(metadata.place),
        metadata.latitude.map(SQLValue.real) ?? .null,
        metadata.longitude.map(SQLValue.real) ?? .null, .text(metadata.indoorLevel),
        metadata.expectedStability.map { .text($0.rawValue) } ?? .null, .text(project),
        .text(beacon),
      ])
    try sql.execute(
      "DELETE FROM beacon_properties WHERE project = ? AND beacon = ?",
      [.text(project), .text(beacon)])
    for (key, value) in metadata.properties.sorted(by: { $0.key < $1.key }) {
      try sql.execute(
        "INSERT INTO beacon_properties (project, beacon, property, value) VALUES (?, ?, ?, ?)",
        [.text(project), .text(beacon), .text(key), .text(value)])
    }
  }

  /// A beacon's properties.
  func properties(project: String, beacon: String) throws -> [String: String] {
    let rows = try sql.query(
      "SELECT property, value FROM beacon_properties WHERE project = ? AND beacon = ?",
      [.text(project), .text(beacon)])
    var properties: [String: String] = [:]
    for row in rows { properties[try row.text(0)] = try row.text(1) }
    return properties
  }
}
