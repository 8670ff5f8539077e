import Foundation

/// What each project holds (devices, stored bytes) and did (devices seen, found and lost
/// events), for the console and the quotas; read only.
public struct Projects {
  let sql: any SQLConnection
  let coding: SQLCoding

  init(_ sql: any SQLConnection, coding: SQLCoding) {
    self.sql = sql
    self.coding = coding
  }

  /// The devices registered in `project` (an index look-up).
  /// - Throws: the database's error.
  public func deviceCount(project: String) throws -> Int {
    Int(
      try sql.queryFirst("SELECT COUNT(*) FROM devices WHERE project = ?", [.text(project)])?
        .integer(0) ?? 0)
  }

  /// Every project's usage: scans devices, publications and attachments (the sweeper does
  /// this once a minute, not a request).
  /// - Throws: the database's error.
  public func projectUsage() throws -> [String: ProjectUsage] {
    var usage: [String: ProjectUsage] = [:]
    for row in try sql.query("SELECT project, COUNT(*) FROM devices GROUP BY project", []) {
      usage[try row.text(0), default: ProjectUsage()].devices = Int(try row.integer(1))
    }
    for table in [("publications", "content"), ("attachments", "data")] {
      for row in try sql.query(
        "SELECT project, SUM(length(\(table.1))) FROM \(table.0) GROUP BY project", [])
      {
        usage[try row.text(0), default: ProjectUsage()].storedBytes +=
          Int(try row.optionalInteger(1) ?? 0)
      }
    }
    return usage
  }
}
