public import Foundation
import Crypto
import Tokens

/// Project API keys (contract §7): created for a project, looked up by the SHA-256 of the key
/// (keys are 256-bit random, so a fast hash is the right one; no password hashing is needed),
/// revoked by id.
public struct APIKeys {
  let sql: any SQLConnection
  let consoleSessions: ConsoleSessions

  init(_ sql: any SQLConnection, consoleSessions: ConsoleSessions) {
    self.sql = sql
    self.consoleSessions = consoleSessions
  }

  /// Creates a key for `project` with `role` (give apps ``APIKeyRole/client`` keys).
  public func createAPIKey(
    project: String, role: APIKeyRole, label: String, now: Date
  ) throws -> NewAPIKey {
    var generator = SystemRandomNumberGenerator()
    let secret = (0..<32).map { _ in UInt8.random(in: .min ... .max, using: &generator) }
    let key = "nk_" + Data(secret).base64URLEncoded
    let idBytes = (0..<6).map { _ in UInt8.random(in: .min ... .max, using: &generator) }
    let id = "key_" + Data(idBytes).base64URLEncoded
    let record = APIKeyRecord(
      id: id, project: project, role: role, label: label, createdAt: now, revokedAt: nil)
    try sql.execute(
      """
      INSERT INTO api_keys (id, project, role, digest, label, created_at)
      VALUES (?, ?, ?, ?, ?, ?)
      """,
      [
        .text(id), .text(project), .text(role.rawValue), .text(Self.digest(ofKey: key)),
        .text(label), SQLValue(now),
      ])
    return NewAPIKey(record: record, key: key)
  }

  /// The key's record, if the key is known (revoked or not).
  public func apiKey(_ key: String) throws -> APIKeyRecord? {
    try sql.queryFirst(
      "SELECT \(Self.apiKeyColumns) FROM api_keys WHERE digest = ?",
      [.text(Self.digest(ofKey: key))]
    ).map(apiKeyRecord)
  }

  /// Whether the key with this id exists and is not revoked.
  public func isActiveAPIKey(id: String) throws -> Bool {
    try sql.queryFirst(
      "SELECT 1 FROM api_keys WHERE id = ? AND revoked_at IS NULL", [.text(id)]) != nil
  }

  /// Every key, or a project's keys, oldest first.
  public func apiKeys(project: String? = nil) throws -> [APIKeyRecord] {
    let columns = Self.apiKeyColumns
    if let project {
      return try sql.query(
        "SELECT \(columns) FROM api_keys WHERE project = ? ORDER BY created_at, id",
        [.text(project)]
      ).map(apiKeyRecord)
    }
    return try sql.query("SELECT \(columns) FROM api_keys ORDER BY created_at, id", [])
      .map(apiKeyRecord)
  }

  /// Revokes the key with this id; false if there is none (or it was already revoked).
  public func revokeAPIKey(id: String, now: Date) throws -> Bool {
    let found = try sql.queryFirst(
      "SELECT 1 FROM api_keys WHERE id = ? AND revoked_at IS NULL", [.text(id)])
    guard found != nil else { return false }
    try sql.execute("UPDATE api_keys SET revoked_at = ? WHERE id = ?", [SQLValue(now), .text(id)])
    // Its console sessions end with it.
    try consoleSessions.endConsoleSessions(keyID: id)
    return true
  }

  private static let apiKeyColumns = "id, project, role, label, created_at, revoked_at"

  private func apiKeyRecord(_ row: SQLRow) throws -> APIKeyRecord {
    let roleText = try row.text(2)
    guard let role = APIKeyRole(rawValue: roleText) else {
      throw SQLStorageError.unexpectedValue("api_keys.role \"\(roleText)\" is no role")
    }
    return APIKeyRecord(
      id: try row.text(0), project: try row.text(1), role: role, label: try row.text(3),
      createdAt: Date(timeIntervalSince1970: try row.real(4)),
      revokedAt: try row.optionalReal(5).map(Date.init(timeIntervalSince1970:)))
  }

  static func digest(ofKey key: String) -> String {
    Hex.encode(SHA256.hash(data: Data(key.utf8)))
  }
}

extension Data {
  /// Base64url without padding (RFC 4648 §5).
  var base64URLEncoded: String {
    base64EncodedString().replacingOccurrences(of: "+", with: "-")
      .replacingOccurrences(of: "/", with: "_").replacingOccurrences(of: "=", with: "")
  }
}
