import Crypto
import Tokens

/// The LAN medium's wire format: one 40-byte UDP datagram per announcement.
///
/// ```
/// offset  size  field
///      0     4  magic "NBYL"
///      4     1  version (2)
///      5     1  flags: bit 0 set = "keyed" (the check is a tag under the site key); others 0
///      6     2  peer port: the UDP port of the sender's LANPeerTransport, big-endian; 0 for
///                 none (version 2 receivers before peer resolution ignore it)
///      8     8  token
///     16     8  sent at: milliseconds since 1970-01-01 UTC, big-endian
///     24     4  sender: random, drawn again for every new token (to ignore our own datagrams)
///     28     4  counter: per sender, from 1, incremented per datagram, big-endian
///     32     8  check, over bytes 0..<32, first 8 bytes of:
///                 keyed:   HMAC-SHA256 under the site key (LANMulticastConfiguration.sharedKey)
///                 unkeyed: SHA-256
/// ```
/// What the check proves depends on the key. With a site key it authenticates: only a holder
/// of the key can make a datagram that a keyed receiver accepts. Without one it is a
/// checksum of public bytes that anyone can compute, so it catches corruption and nothing
/// more: unkeyed datagrams are *not* authenticated, and any host on the segment can announce
/// any token it heard. (The resolver server judges the sightings either way.)
///
/// Version 1 (issue 16) keyed an HMAC by the token, which travels in the clear: anyone who
/// heard one datagram could make more, so it was a checksum that claimed to authenticate.
/// Version 2 adds the flags byte, the optional site key, and a new sender id per token.
/// Receivers drop versions other than 2.
struct Datagram: Sendable, Hashable {
  static let magic: [UInt8] = Array("NBYL".utf8)
  static let version: UInt8 = 2
  static let size = 40
  static let checkSize = 8
  /// Flag bit 0: the check is an HMAC under the site key.
  static let keyedFlag: UInt8 = 0x01

  var token: Token
  /// Milliseconds since the Unix epoch.
  var sentAt: UInt64
  var sender: UInt32
  var counter: UInt32
  /// Where the sender's peer transport receives, on the datagram's source address (0: none).
  var peerPort: UInt16 = 0

  /// The datagram's bytes, check included: an HMAC tag under `key`, or without one a plain
  /// SHA-256 checksum.
  func encoded(key: SymmetricKey?) -> [UInt8] {
    var bytes =
      Self.magic + [
        Self.version, key == nil ? 0 : Self.keyedFlag, UInt8(peerPort >> 8), UInt8(peerPort & 0xff),
      ]
    bytes += token.bytes
    bytes += Self.bigEndian(sentAt)
    bytes += Self.bigEndian(UInt64(sender) << 32 | UInt64(counter))
    bytes += Self.check(of: bytes, key: key)
    return bytes
  }

  /// Why received bytes are not a datagram we accept.
  enum Rejection: Error, Sendable, Hashable {
    case wrongSize(Int)
    case notOurs
    case unknownVersion(UInt8)
    /// Unkeyed, and the checksum does not match: corrupted.
    case badChecksum
    /// Keyed, and the tag is not the one the site key gives: forged, altered, or made under
    /// another key.
    case badTag
    /// Unkeyed, but this receiver has a site key: every datagram must carry a tag.
    case missingTag
    /// Keyed, but this receiver has no site key to check it with.
    case keyedElsewhere
  }

  /// Parses and checks `bytes`; with `key`, accepts only datagrams with a valid tag under it,
  /// without one only unkeyed datagrams with a valid checksum.
  /// - Throws: ``Rejection`` saying why they are refused.
  init(checking bytes: some Collection<UInt8>, key: SymmetricKey?) throws(Rejection) {
    let bytes = Array(bytes)
    guard bytes.count == Self.size else { throw .wrongSize(bytes.count) }
    guard Array(bytes[0..<4]) == Self.magic else { throw .notOurs }
    guard bytes[4] == Self.version else { throw .unknownVersion(bytes[4]) }
    let keyed = bytes[5] & Self.keyedFlag != 0
    switch (keyed, key) {
    case (false, .some): throw .missingTag
    case (true, .none): throw .keyedElsewhere
    default: break
    }
    let expected = Self.check(of: bytes[0..<32], key: key)
    // Constant time: every byte is compared whatever the first difference.
    var difference: UInt8 = 0
    for (index, byte) in expected.enumerated() { difference |= byte ^ bytes[32 + index] }
    guard difference == 0 else { throw keyed ? .badTag : .badChecksum }
    guard let token = try? Token(bytes: bytes[8..<16]) else { throw .notOurs }
    self.token = token
    sentAt = Self.integer(bytes[16..<24])
    let tail = Self.integer(bytes[24..<32])
    sender = UInt32(truncatingIfNeeded: tail >> 32)
    counter = UInt32(truncatingIfNeeded: tail)
    peerPort = UInt16(bytes[6]) << 8 | UInt16(bytes[7])
  }

  init(token: Token, sentAt: UInt64, sender: UInt32, counter: UInt32, peerPort: UInt16 = 0) {
    self.token = token
    self.sentAt = sentAt
    self.sender = sender
    self.counter = counter
    self.peerPort = peerPort
  }

  /// The first ``checkSize`` bytes of HMAC-SHA256 under `key`, or of SHA-256 without one.
  static func check(of bytes: some Collection<UInt8>, key: SymmetricKey?) -> [UInt8] {
    let digest: [UInt8]
    if let key {
      digest = Array(HMAC<SHA256>.authenticationCode(for: Array(bytes), using: key))
    } else {
      digest = Array(SHA256.hash(data: Array(bytes)))
    }
    return Array(digest.prefix(checkSize))
  }

  private static func bigEndian(_ value: UInt64) -> [UInt8] {
    (0..<8).map { UInt8(truncatingIfNeeded: value >> (56 - 8 * $0)) }
  }

  private static func integer(_ bytes: ArraySlice<UInt8>) -> UInt64 {
    bytes.reduce(0) { $0 << 8 | UInt64($1) }
  }
}
