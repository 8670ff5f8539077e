import Crypto
import Tokens

/// The LAN medium's wire format: one 40-byte UDP datagram per announcement.
///
/// ```
/// offset  size  field
///      0     4  magic "NBYL"
///      4     1  version (1)
///      5     3  reserved, zero
///      8     8  token
///     16     8  sent at: milliseconds since 1970-01-01 UTC, big-endian
///     24     4  sender: random per medium instance (to ignore our own datagrams)
///     28     4  counter: per sender, incremented per datagram, big-endian
///     32     8  MAC: HMAC-SHA256 keyed by the 8 token bytes over bytes 0..<32, first 8 bytes
/// ```
/// The MAC shows the datagram came from a holder of the token, so a forged or altered
/// datagram is dropped; the timestamp and the (sender, counter) pair let receivers drop
/// stale and repeated datagrams.
struct Datagram: Sendable, Hashable {
  static let magic: [UInt8] = Array("NBYL".utf8)
  static let version: UInt8 = 1
  static let size = 40
  static let macSize = 8

  var token: Token
  /// Milliseconds since the Unix epoch.
  var sentAt: UInt64
  var sender: UInt32
  var counter: UInt32

  /// The datagram's bytes, MAC included.
  func encoded() -> [UInt8] {
    var bytes = Self.magic + [Self.version, 0, 0, 0]
    bytes += token.bytes
    bytes += Self.bigEndian(sentAt)
    bytes += Self.bigEndian(UInt64(sender) << 32 | UInt64(counter))
    bytes += Self.mac(of: bytes, key: token)
    return bytes
  }

  /// Why received bytes are not a datagram we accept.
  enum Rejection: Error, Sendable, Hashable {
    case wrongSize(Int)
    case notOurs
    case unknownVersion(UInt8)
    case badMAC
  }

  /// Parses and authenticates `bytes`.
  /// - Throws: ``Rejection`` saying why they are refused.
  init(authenticating bytes: some Collection<UInt8>) throws(Rejection) {
    let bytes = Array(bytes)
    guard bytes.count == Self.size else { throw .wrongSize(bytes.count) }
    guard Array(bytes[0..<4]) == Self.magic else { throw .notOurs }
    guard bytes[4] == Self.version else { throw .unknownVersion(bytes[4]) }
    guard let token = try? Token(bytes: bytes[8..<16]) else { throw .notOurs }
    let expected = Self.mac(of: bytes[0..<32], key: token)
    // Constant time: every byte is compared whatever the first difference.
    var difference: UInt8 = 0
    for (index, byte) in expected.enumerated() { difference |= byte ^ bytes[32 + index] }
    guard difference == 0 else { throw .badMAC }
    self.token = token
    sentAt = Self.integer(bytes[16..<24])
    let tail = Self.integer(bytes[24..<32])
    sender = UInt32(truncatingIfNeeded: tail >> 32)
    counter = UInt32(truncatingIfNeeded: tail)
  }

  init(token: Token, sentAt: UInt64, sender: UInt32, counter: UInt32) {
    self.token = token
    self.sentAt = sentAt
    self.sender = sender
    self.counter = counter
  }

  static func mac(of bytes: some Collection<UInt8>, key token: Token) -> [UInt8] {
    let code = HMAC<SHA256>.authenticationCode(
      for: Array(bytes), using: SymmetricKey(data: token.bytes))
    return Array(Array(code).prefix(macSize))
  }

  private static func bigEndian(_ value: UInt64) -> [UInt8] {
    (0..<8).map { UInt8(truncatingIfNeeded: value >> (56 - 8 * $0)) }
  }

  private static func integer(_ bytes: ArraySlice<UInt8>) -> UInt64 {
    bytes.reduce(0) { $0 << 8 | UInt64($1) }
  }
}
