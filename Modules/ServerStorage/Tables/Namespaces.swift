public import Foundation

/// Namespaces (contract §7): owned by the first project that attaches data in one (or sets
/// its visibility first); only the owner writes in it; a `public` one is read by any project
/// that names it.
public struct Namespaces {
  let sql: any SQLConnection

  init(_ sql: any SQLConnection) {
    self.sql = sql
  }

  /// Makes `project` the owner of `name` if nobody owns it yet.
  /// - Returns: the namespace's record (the owner's).
  /// - Throws: ``BeaconInputError/notOwned(_:)`` when another project owns it; the
  ///   database's error.
  @discardableResult
  public func claimNamespace(project: String, name: String, now: Date) throws -> NamespaceRecord {
    // Two projects claiming at once: one insert wins, the other inserts nothing and then
    // reads the winner.
    try sql.execute(
      """
      INSERT INTO namespaces (project, name, visibility, created_at) VALUES (?, ?, 'unlisted', ?)
      ON CONFLICT (name) DO NOTHING
      """, [.text(project), .text(name), SQLValue(now)])
    guard let record = try namespace(name) else {
      throw SQLStorageError.unexpectedValue("namespace \(name) missing after its insert")
    }
    guard record.project == project else {
      throw BeaconInputError.notOwned(
        "namespace '\(name)' belongs to another project; attach in a namespace of your own")
    }
    return record
  }

  /// The namespace `name`, whoever owns it; nil when nobody does.
  public func namespace(_ name: String) throws -> NamespaceRecord? {
    try sql.queryFirst(
      "SELECT project, name, visibility, created_at FROM namespaces WHERE name = ?",
      [.text(name)]
    ).map(Self.namespaceRecord)
  }

  /// The namespaces `project` owns, by name.
  public func namespaces(project: String) throws -> [NamespaceRecord] {
    try sql.query(
      """
      SELECT project, name, visibility, created_at FROM namespaces
      WHERE project = ? ORDER BY name
      """, [.text(project)]
    ).map(Self.namespaceRecord)
  }

  /// Sets a namespace's visibility, claiming it first if nobody owns it.
  /// - Throws: ``BeaconInputError/notOwned(_:)`` when another project owns it.
  public func setNamespaceVisibility(
    project: String, name: String, visibility: NamespaceVisibility, now: Date
  ) throws -> NamespaceRecord {
    var record = try claimNamespace(project: project, name: name, now: now)
    try sql.execute(
      "UPDATE namespaces SET visibility = ? WHERE project = ? AND name = ?",
      [.text(visibility.rawValue), .text(project), .text(name)])
    record.visibility = visibility
    return record
  }

  /// Of `names`, the public namespaces owned by a project other than `project`, by name.
  public func publicNamespaces(named names: Set<String>, readBy project: String) throws
    -> [NamespaceRecord]
  {
    var found: [NamespaceRecord] = []
    for name in names.sorted() {
      guard let record = try namespace(name), record.project != project,
        record.visibility == .public
      else { continue }
      found.append(record)
    }
    return found
  }

  private static func namespaceRecord(_ row: SQLRow) throws -> NamespaceRecord {
    let text = try row.text(2)
    guard let visibility = NamespaceVisibility(rawValue: text) else {
      throw SQLStorageError.unexpectedValue("namespace visibility \(text)")
    }
    return NamespaceRecord(
      name: try row.text(1), project: try row.text(0), visibility: visibility,
      createdAt: Date(timeIntervalSince1970: try row.real(3)))
  }
}
