public import Foundation

/// Each project's Curve25519 key pair for Eddystone-EID key exchange (``EIDKeyExchange``),
/// made at its first use and shared by every instance on the database. Its private key is as
/// secret as the identity keys it derives: it stays in the database and no call answers it.
///
/// One pair per project, not one per server: with a shared pair, the identity key a beacon
/// and the server agree on depends only on the beacon's public key, so any project that knows
/// it (it travels with the registration) could register the same identity and resolve the
/// beacon's rotating ids. Beacons registered under the server-wide pair of earlier versions
/// (`eid_service_keys`) keep the identity key derived then, and keep resolving.
extension BeaconTables {
  /// The project's service key pair, made now if it has none yet.
  public func eidServiceKey(project: String, now: Date) throws -> (
    privateKey: [UInt8], publicKey: [UInt8]
  ) {
    let select = "SELECT private_key, public_key FROM eid_project_keys WHERE project = ?"
    if let row = try sql.queryFirst(select, [.text(project)]) {
      return (try row.blob(0), try row.blob(1))
    }
    let made = EIDKeyExchange.newServiceKey()
    // Two instances making one at once: one insert wins, both read the winner.
    try sql.execute(
      """
      INSERT INTO eid_project_keys (project, private_key, public_key, created_at)
      VALUES (?, ?, ?, ?) ON CONFLICT (project) DO NOTHING
      """, [.text(project), .blob(made.privateKey), .blob(made.publicKey), SQLValue(now)])
    guard let row = try sql.queryFirst(select, [.text(project)]) else {
      throw SQLStorageError.unexpectedValue("the EID service key is missing after its insert")
    }
    return (try row.blob(0), try row.blob(1))
  }
}
