import Crypto
import Tokens

/// The LAN medium's wire format: one UDP datagram per announcement, in one of two forms.
///
/// Without a site key (version 2, 40 bytes):
/// ```
/// offset  size  field
///      0     4  magic "NBYL"
///      4     1  version (2)
///      5     1  flags: 0
///      6     2  peer port: the UDP port of the sender's LANPeerTransport, big-endian; 0 for
///                 none
///      8     8  token
///     16     8  sent at: milliseconds since 1970-01-01 UTC, big-endian
///     24     4  sender: random, drawn again for every new token (to ignore our own datagrams)
///     28     4  counter: per sender, from 1, incremented per datagram, big-endian
///     32     8  check: the first 8 bytes of SHA-256 over bytes 0..<32
/// ```
/// The check is a checksum of public bytes that anyone can compute, so it catches corruption
/// and nothing more: these datagrams are *not* authenticated, and any host on the segment can
/// announce any token, with any way back. (The resolver judges the sightings either way, and
/// peer resolution only probes a way back before it trusts it.)
///
/// With a site key (version 3, 64 bytes), everything but the format is sealed:
/// ```
/// offset  size  field
///      0     4  magic "NBYL"
///      4     1  version (3)
///      5     1  flags: bit 0 set ("sealed"); others 0
///      6     2  reserved (0)
///      8    12  nonce (random per datagram)
///     20    28  sealed with ChaCha20-Poly1305 under the site key (bytes 0..<20 authenticated):
///                 peer port u16 ‖ token 8 ‖ sent at u64 ‖ sender u32 ‖ counter u32 ‖ 0 0
///     48    16  Poly1305 tag
/// ```
/// With a site key and a digest to carry (peer resolution's `HandlesDigest` (Core) of the
/// sender's handles), version 4, 72 bytes: the same, but the sealed part is 36 bytes, the
/// digest (8, big-endian, never 0) after the counter and before the two zero bytes:
/// ```
///     20    36  sealed: peer port u16 ‖ token 8 ‖ sent at u64 ‖ sender u32 ‖ counter u32 ‖
///                 digest u64 ‖ 0 0
///     56    16  Poly1305 tag
/// ```
/// A sender without a digest sends version 3, which every keyed receiver accepts; a receiver
/// of an older build refuses version 4 by its size, which it does not know (counted as
/// `wrongSize`, not misread).
/// The unkeyed form never carries a digest: anyone could forge it.
///
/// Only a holder of the key can make a datagram a keyed receiver accepts, and a listener
/// without it learns that somebody on the segment runs nearby and nothing else: not the token,
/// not the send time (a clock's skew links a device's datagrams across rotations), not the
/// peer port. In peer mode the key is derived from the project key, so every device of a
/// project has it. Receivers drop other versions, and a keyed receiver drops version 2.
struct Datagram: Sendable, Hashable {
  static let magic: [UInt8] = Array("NBYL".utf8)
  /// The unkeyed form's version.
  static let version: UInt8 = 2
  /// The unkeyed form's size.
  static let size = 40
  static let checkSize = 8
  /// The sealed form's version and size.
  static let sealedVersion: UInt8 = 3
  static let sealedSize = 64
  /// The sealed form with a digest: its version and size.
  static let digestVersion: UInt8 = 4
  static let digestSize = 72
  /// Flag bit 0: sealed under the site key.
  static let keyedFlag: UInt8 = 0x01

  var token: Token
  /// Milliseconds since the Unix epoch.
  var sentAt: UInt64
  var sender: UInt32
  var counter: UInt32
  /// Where the sender's peer transport receives, on the datagram's source address (0: none).
  var peerPort: UInt16 = 0
  /// The digest of the sender's handles, 0 for none; only ever sent sealed.
  var digest: UInt64 = 0

  /// The datagram's bytes: sealed under `key` (version 4 with a digest, else 3), or without
  /// one with a plain SHA-256 checksum (version 2, no digest).
  func encoded(key: SymmetricKey?) -> [UInt8] {
    guard let key else {
      var bytes =
        Self.magic + [Self.version, 0, UInt8(peerPort >> 8), UInt8(peerPort & 0xff)]
      bytes += token.bytes
      bytes += Self.bigEndian(sentAt)
      bytes += Self.bigEndian(UInt64(sender) << 32 | UInt64(counter))
      bytes += Self.check(of: bytes)
      return bytes
    }
    let nonce = ChaChaPoly.Nonce()
    let version = digest == 0 ? Self.sealedVersion : Self.digestVersion
    let header = Self.magic + [version, Self.keyedFlag, 0, 0] + Array(nonce)
    var plaintext = [UInt8(peerPort >> 8), UInt8(peerPort & 0xff)] + token.bytes
    plaintext += Self.bigEndian(sentAt)
    plaintext += Self.bigEndian(UInt64(sender) << 32 | UInt64(counter))
    if digest != 0 { plaintext += Self.bigEndian(digest) }
    plaintext += [0, 0]
    // A 32-byte key and a 12-byte nonce: sealing cannot fail.
    let box = try! ChaChaPoly.seal(plaintext, using: key, nonce: nonce, authenticating: header)
    return header + Array(box.ciphertext) + Array(box.tag)
  }

  /// Why received bytes are not a datagram we accept.
  enum Rejection: Error, Sendable, Hashable {
    case wrongSize(Int)
    case notOurs
    case unknownVersion(UInt8)
    /// Unkeyed, and the checksum does not match: corrupted.
    case badChecksum
    /// Sealed, and the seal does not open under the site key: forged, altered, or made under
    /// another key.
    case badTag
    /// Not sealed, but this receiver has a site key: every datagram must be sealed under it.
    case missingTag
    /// Sealed, but this receiver has no site key to open it with.
    case keyedElsewhere
  }

  /// Parses and checks `bytes`; with `key`, accepts only datagrams sealed under it (version
  /// 3, or 4 with a digest), without one only unkeyed datagrams with a valid checksum
  /// (version 2).
  /// - Throws: ``Rejection`` saying why they are refused.
  init(checking bytes: some Collection<UInt8>, key: SymmetricKey?) throws(Rejection) {
    let bytes = Array(bytes)
    guard [Self.size, Self.sealedSize, Self.digestSize].contains(bytes.count) else {
      throw .wrongSize(bytes.count)
    }
    guard Array(bytes[0..<4]) == Self.magic else { throw .notOurs }
    let version = bytes[4]
    let expectedSize: Int
    switch version {
    case Self.version: expectedSize = Self.size
    case Self.sealedVersion: expectedSize = Self.sealedSize
    case Self.digestVersion: expectedSize = Self.digestSize
    default: throw .unknownVersion(version)
    }
    let sealed = version != Self.version
    guard bytes.count == expectedSize else { throw .wrongSize(bytes.count) }
    guard let key else {
      guard !sealed else { throw .keyedElsewhere }
      guard bytes[5] == 0 else { throw .keyedElsewhere }
      // Constant time: every byte is compared whatever the first difference.
      var difference: UInt8 = 0
      for (index, byte) in Self.check(of: bytes[0..<32]).enumerated() {
        difference |= byte ^ bytes[32 + index]
      }
      guard difference == 0 else { throw .badChecksum }
      self.init(fields: bytes[6..<32])
      return
    }
    guard sealed else { throw .missingTag }
    guard bytes[5] == Self.keyedFlag, bytes[6] == 0, bytes[7] == 0 else { throw .badTag }
    let plaintext: [UInt8]
    let tagStart = expectedSize - 16
    do {
      let box = try ChaChaPoly.SealedBox(
        nonce: ChaChaPoly.Nonce(data: bytes[8..<20]), ciphertext: bytes[20..<tagStart],
        tag: bytes[tagStart..<expectedSize])
      plaintext = Array(try ChaChaPoly.open(box, using: key, authenticating: bytes[0..<20]))
    } catch {
      throw .badTag
    }
    self.init(fields: plaintext[0..<26])
    if version == Self.digestVersion {
      digest = Self.integer(plaintext[26..<34])
      // Sealed by a key holder, so no forgery; a zero would be a sender's bug: none.
    }
  }

  /// The fields both forms carry in this order: peer port 2 ‖ token 8 ‖ sent at 8 ‖
  /// sender 4 ‖ counter 4.
  private init(fields: ArraySlice<UInt8>) {
    let start = fields.startIndex
    peerPort = UInt16(fields[start]) << 8 | UInt16(fields[start + 1])
    token = Token(value: Self.integer(fields[(start + 2)..<(start + 10)]))
    sentAt = Self.integer(fields[(start + 10)..<(start + 18)])
    let tail = Self.integer(fields[(start + 18)..<(start + 26)])
    sender = UInt32(truncatingIfNeeded: tail >> 32)
    counter = UInt32(truncatingIfNeeded: tail)
  }

  init(
    token: Token, sentAt: UInt64, sender: UInt32, counter: UInt32, peerPort: UInt16 = 0,
    digest: UInt64 = 0
  ) {
    self.token = token
    self.sentAt = sentAt
    self.sender = sender
    self.counter = counter
    self.peerPort = peerPort
    self.digest = digest
  }

  /// The first ``checkSize`` bytes of SHA-256 over `bytes`.
  static func check(of bytes: some Collection<UInt8>) -> [UInt8] {
    Array(SHA256.hash(data: Array(bytes)).prefix(checkSize))
  }

  private static func bigEndian(_ value: UInt64) -> [UInt8] {
    (0..<8).map { UInt8(truncatingIfNeeded: value >> (56 - 8 * $0)) }
  }

  private static func integer(_ bytes: ArraySlice<UInt8>) -> UInt64 {
    bytes.reduce(0) { $0 << 8 | UInt64($1) }
  }
}
