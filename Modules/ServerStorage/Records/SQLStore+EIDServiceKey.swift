public import Foundation

/// The server's Curve25519 key pair for Eddystone-EID key exchange (``EIDKeyExchange``): one
/// for every instance sharing the database, made at its first use. Its private key is as
/// secret as the identity keys it derives: it stays in the database and no call answers it.
extension SQLStore {
  /// The service key pair, made now if there is none yet.
  public func eidServiceKey(now: Date) throws -> (privateKey: [UInt8], publicKey: [UInt8]) {
    if let row = try sql.queryFirst(
      "SELECT private_key, public_key FROM eid_service_keys WHERE id = 'current'", [])
    {
      return (try row.blob(0), try row.blob(1))
    }
    let made = EIDKeyExchange.newServiceKey()
    // Two instances making one at once: one insert wins, both read the winner.
    try sql.execute(
      """
      INSERT INTO eid_service_keys (id, private_key, public_key, created_at)
      VALUES ('current', ?, ?, ?) ON CONFLICT (id) DO NOTHING
      """, [.blob(made.privateKey), .blob(made.publicKey), SQLValue(now)])
    guard
      let row = try sql.queryFirst(
        "SELECT private_key, public_key FROM eid_service_keys WHERE id = 'current'", [])
    else {
      throw SQLStorageError.unexpectedValue("the EID service key is missing after its insert")
    }
    return (try row.blob(0), try row.blob(1))
  }
}
