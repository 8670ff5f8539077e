import Crypto

/// Eddystone-EID configuration by key exchange (the specification's "secure key exchange"):
/// the server and the beacon each hold a Curve25519 key pair; both derive the beacon's
/// identity key from the ECDH shared secret, so the identity key never travels.
///
/// identity key = the first 16 bytes of HKDF-SHA256(shared secret, salt: service public key ‖
/// beacon public key, info: empty).
public enum EIDKeyExchange {
  /// A Curve25519 public key's length in bytes.
  public static let publicKeyBytes = 32

  /// The identity key shared with the beacon whose public key is `beaconPublicKey` (the
  /// server's side).
  /// - Throws: ``EIDKeyExchangeError`` for a key that is not 32 bytes, or one whose shared
  ///   secret is zero (a low-order point: refused, as the specification asks).
  public static func identityKey(
    servicePrivateKey: [UInt8], beaconPublicKey: [UInt8]
  ) throws(EIDKeyExchangeError) -> [UInt8] {
    let service = try privateKey(servicePrivateKey)
    return try derive(
      service, peer: beaconPublicKey,
      salt: Array(service.publicKey.rawRepresentation) + beaconPublicKey)
  }

  /// The same identity key from the beacon's side (what a tool configuring a beacon computes).
  /// - Throws: as ``identityKey(servicePrivateKey:beaconPublicKey:)``.
  public static func identityKey(
    beaconPrivateKey: [UInt8], servicePublicKey: [UInt8]
  ) throws(EIDKeyExchangeError) -> [UInt8] {
    let beacon = try privateKey(beaconPrivateKey)
    return try derive(
      beacon, peer: servicePublicKey,
      salt: servicePublicKey + Array(beacon.publicKey.rawRepresentation))
  }

  private static func privateKey(_ bytes: [UInt8]) throws(EIDKeyExchangeError)
    -> Curve25519.KeyAgreement.PrivateKey
  {
    do { return try Curve25519.KeyAgreement.PrivateKey(rawRepresentation: bytes) } catch {
      throw .malformedKey("a Curve25519 key is \(publicKeyBytes) bytes")
    }
  }

  /// HKDF-SHA256 of the ECDH secret of `key` and `peer`, with `salt` and no info: 16 bytes.
  private static func derive(
    _ key: Curve25519.KeyAgreement.PrivateKey, peer: [UInt8], salt: [UInt8]
  ) throws(EIDKeyExchangeError) -> [UInt8] {
    let peerKey: Curve25519.KeyAgreement.PublicKey
    do { peerKey = try Curve25519.KeyAgreement.PublicKey(rawRepresentation: peer) } catch {
      throw .malformedKey("a Curve25519 key is \(publicKeyBytes) bytes")
    }
    let secret: SharedSecret
    do { secret = try key.sharedSecretFromKeyAgreement(with: peerKey) } catch {
      throw .zeroSharedSecret
    }
    let bytes = secret.withUnsafeBytes { Array($0) }
    guard bytes.contains(where: { $0 != 0 }) else { throw .zeroSharedSecret }
    let derived = HKDF<SHA256>.deriveKey(
      inputKeyMaterial: SymmetricKey(data: bytes), salt: salt, info: [UInt8](),
      outputByteCount: 32)
    return derived.withUnsafeBytes { Array($0.prefix(16)) }
  }

  /// A new service key pair: (private, public), 32 bytes each.
  public static func newServiceKey() -> (privateKey: [UInt8], publicKey: [UInt8]) {
    let key = Curve25519.KeyAgreement.PrivateKey()
    return (Array(key.rawRepresentation), Array(key.publicKey.rawRepresentation))
  }

  /// The public key of a service private key.
  /// - Throws: ``EIDKeyExchangeError/malformedKey(_:)`` for a key that is not 32 bytes.
  public static func publicKey(of privateKey: [UInt8]) throws(EIDKeyExchangeError) -> [UInt8] {
    Array(try Self.privateKey(privateKey).publicKey.rawRepresentation)
  }
}

/// Why a key exchange failed.
public enum EIDKeyExchangeError: Error, Sendable, Hashable, CustomStringConvertible {
  case malformedKey(String)
  /// The beacon's key gives an all-zero shared secret (a low-order point).
  case zeroSharedSecret

  public var description: String {
    switch self {
    case .malformedKey(let why): why
    case .zeroSharedSecret:
      "the beacon's public key gives a zero shared secret (a low-order point); make a new key pair"
    }
  }
}
