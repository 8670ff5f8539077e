import Crypto
import Foundation
import Tokens

/// A secret shared by every device of one deployment (a site, a fleet, a building) that
/// authenticates the LAN medium's datagrams.
///
/// Set it as ``LANMulticastConfiguration/sharedKey`` on every device of the deployment: each
/// datagram is then sealed (ChaCha20-Poly1305) under a key derived from it, and a medium with
/// a key drops every datagram that does not open. Someone on the network segment who does not hold the
/// key cannot make a datagram those devices accept, even for a token they heard. Anyone
/// who holds it can, so give it only to the deployment's devices, and store it as a secret
/// (a file readable by the app's user only).
///
/// Without a shared key datagrams are *not* authenticated (see
/// ``LANMulticastConfiguration/sharedKey``).
///
/// The key is a value: compare, copy and send it across tasks freely. Its
/// `description` never shows the bytes.
public struct LANMulticastKey: Sendable, Hashable, CustomStringConvertible {
  /// The fewest bytes a key may have: 16 (128 bits).
  public static let minimumByteCount = 16
  /// The size of a ``random()`` key: 32 bytes (SHA-256's output size).
  public static let randomByteCount = 32

  let bytes: [UInt8]

  /// A key made of `bytes`.
  /// - Throws: ``LANMulticastError/invalidConfiguration(_:)`` when there are fewer than
  ///   ``minimumByteCount`` bytes.
  public init(bytes: some Collection<UInt8>) throws(LANMulticastError) {
    guard bytes.count >= Self.minimumByteCount else {
      throw .invalidConfiguration(
        "a shared key needs at least \(Self.minimumByteCount) bytes, got \(bytes.count)")
    }
    self.init(checked: Array(bytes))
  }

  /// A key from its hex form (as `openssl rand -hex 32` prints it); surrounding white space,
  /// such as a key file's final newline, is ignored.
  /// - Throws: ``LANMulticastError/invalidConfiguration(_:)`` when the text is not an even
  ///   number of hex digits, or is shorter than ``minimumByteCount`` bytes.
  public init(hex text: some StringProtocol) throws(LANMulticastError) {
    guard let bytes = Hex.decode(text.trimmingCharacters(in: .whitespacesAndNewlines)) else {
      throw .invalidConfiguration("a shared key must be written as hex digits")
    }
    try self.init(bytes: bytes)
  }

  /// A fresh key of ``randomByteCount`` bytes from the system's cryptographically secure
  /// generator (getrandom(2)).
  public static func random() -> LANMulticastKey {
    var generator = SystemRandomNumberGenerator()
    return LANMulticastKey(
      checked: (0..<randomByteCount).map { _ in UInt8.random(in: 0...255, using: &generator) })
  }

  private init(checked bytes: [UInt8]) { self.bytes = bytes }

  /// The key in lowercase hex, for writing to a key file that ``init(hex:)`` reads.
  public var hex: String { Hex.encode(bytes) }

  /// The key's size, never its bytes.
  public var description: String { "LANMulticastKey(\(bytes.count) bytes, redacted)" }

  /// Compares in constant time (every byte, whatever the first difference).
  public static func == (lhs: LANMulticastKey, rhs: LANMulticastKey) -> Bool {
    guard lhs.bytes.count == rhs.bytes.count else { return false }
    var difference: UInt8 = 0
    for (left, right) in zip(lhs.bytes, rhs.bytes) { difference |= left ^ right }
    return difference == 0
  }

  /// Hashes the size only, so that no hash table learns anything of the bytes.
  public func hash(into hasher: inout Hasher) { hasher.combine(bytes.count) }

  /// The key that seals the medium's datagrams: HKDF-SHA256 of the key's bytes (256 bits
  /// whatever their number).
  var symmetricKey: SymmetricKey {
    HKDF<SHA256>.deriveKey(
      inputKeyMaterial: SymmetricKey(data: bytes), salt: Array("nearby-lan-v3".utf8),
      info: Array("announcement seal".utf8), outputByteCount: 32)
  }
}
