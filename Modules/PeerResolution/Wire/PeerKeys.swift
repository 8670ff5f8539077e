public import Crypto
import Foundation

/// The keys of one project's peer exchange, derived from its API key with HKDF-SHA256 under
/// fixed labels: the API key itself never leaves the device.
///
/// - ``sealingKey`` (256 bits) seals every datagram's body with ChaCha20-Poly1305 and
///   authenticates its fixed header.
/// - ``projectTag`` (8 bytes, derived under another label, so it reveals nothing of the
///   sealing key) is written in the clear in every header, so a receiver drops another
///   project's datagrams before trying to open them. It is the same for every device and
///   every datagram of the project: a listener learns that two datagrams belong to one
///   project, never which device or which token rotation sent them.
public struct PeerKeys: Sendable {
  /// The key that seals bodies and authenticates headers.
  public let sealingKey: SymmetricKey
  /// The project's tag in every header.
  public let projectTag: UInt64

  /// The salt of both derivations (the protocol and its version).
  static let salt = Array("nearby-peer-resolution-v1".utf8)

  /// Derives the keys of the project that `apiKey` names.
  public init(apiKey: String) {
    let material = SymmetricKey(data: Array(apiKey.utf8))
    sealingKey = HKDF<SHA256>.deriveKey(
      inputKeyMaterial: material, salt: Self.salt, info: Array("sealing key".utf8),
      outputByteCount: 32)
    let tag = HKDF<SHA256>.deriveKey(
      inputKeyMaterial: material, salt: Self.salt, info: Array("project tag".utf8),
      outputByteCount: 8)
    projectTag = tag.withUnsafeBytes { bytes in bytes.reduce(0) { $0 << 8 | UInt64($1) } }
  }
}
