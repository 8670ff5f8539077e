import Crypto
import Foundation

/// The fixed header every peer datagram starts with, authenticated (not encrypted) as the
/// AEAD's associated data. Nothing after it is read before the seal opens.
///
/// ```
/// offset size
///  0      2   magic "NP" (0x4e 0x50)
///  2      1   version (5: a query names the digests each side holds, so an answer to an
///             unchanged owner carries no publications and a hearer whose handles the owner
///             holds sends none; a build of version 4 drops these datagrams as another
///             version's, and is dropped by them likewise)
///  3      1   kind (PeerMessageKind)
///  4      1   flags: bit 0 = a fragment (the body starts with a fragment prefix); others 0
///  5      3   reserved (0)
///  8     12   nonce (random per datagram; the ChaCha20-Poly1305 nonce)
/// 20      8   project tag: the first 8 bytes of HMAC-SHA256(PeerKeys.tagKey, nonce)
/// 28      …   sealed: the send time (u64, milliseconds since 1970, in the receiver's clock
///             as far as the sender knows it), the body's length (u32), the body, then zeros
///             up to the datagram's bucket size (see ``PeerPadding``); then the 16-byte
///             Poly1305 tag
/// ```
///
/// What a listener without the key sees is the format, the kind and the length bucket; no
/// byte is the same from one datagram to the next beyond those. The send time is sealed (a
/// clock's skew would link a device's datagrams across rotations); the project tag is new
/// with every nonce (a constant one named the project and linked its devices across rotations
/// and networks); bodies are padded to a few sizes (their exact lengths repeated across
/// rotations). Receivers drop datagrams of other versions.
struct PeerHeader: Sendable, Hashable {
  static let magic: [UInt8] = [0x4e, 0x50]
  static let version: UInt8 = 5
  /// The header in the clear.
  static let size = 28
  /// The project tag's size in the header.
  static let tagFieldSize = 8
  /// What is sealed before the body: the send time (8) and the body's length (4).
  static let sealedPrefixSize = 12
  static let sealTagSize = 16
  /// What a datagram carries besides its body and padding: header, sealed prefix, seal tag.
  static let overhead = size + sealedPrefixSize + sealTagSize
  /// Flag bit 0: the body is one fragment of a larger message (see ``Fragments``).
  static let fragmentFlag: UInt8 = 0x01

  var kind: PeerMessageKind
  var flags: UInt8 = 0
  var nonce: [UInt8]
  /// The sealed send time: 0 until the datagram is opened.
  var sentAt: UInt64

  /// The header's bytes under `keys` (the project tag made from the nonce).
  func bytes(keys: PeerKeys) -> [UInt8] {
    var writer = ByteWriter(capacity: Self.size)
    writer.raw(Self.magic)
    writer.u8(Self.version)
    writer.u8(kind.rawValue)
    writer.u8(flags)
    writer.raw([0, 0, 0])
    writer.raw(nonce)
    writer.raw(keys.tag(nonce: nonce))
    return writer.bytes
  }

  /// Reads the header of `datagram`, checking only what is cheap: length, magic, version,
  /// kind, flags, and the project tag against `keys` (one HMAC of 12 bytes). The send time is
  /// sealed: ``PeerSealer/open(_:)`` sets it.
  init(parsing datagram: [UInt8], keys: PeerKeys) throws(PeerWireError) {
    guard datagram.count >= Self.overhead else { throw .truncated }
    var reader = ByteReader(datagram)
    guard Array(try reader.raw(2)) == Self.magic, try reader.u8() == Self.version else {
      throw .notPeerDatagram
    }
    guard let kind = PeerMessageKind(rawValue: try reader.u8()) else { throw .invalid("kind") }
    let flags = try reader.u8()
    guard flags & ~Self.fragmentFlag == 0 else { throw .invalid("flags") }
    _ = try reader.raw(3)
    let nonce = Array(try reader.raw(12))
    let tag = try reader.raw(Self.tagFieldSize)
    // Constant time: every byte compared whatever the first difference.
    var difference: UInt8 = 0
    for (expected, got) in zip(keys.tag(nonce: nonce), tag) { difference |= expected ^ got }
    guard difference == 0 else { throw .otherProject }
    self.kind = kind
    self.flags = flags
    self.nonce = nonce
    self.sentAt = 0
  }

  init(kind: PeerMessageKind, flags: UInt8 = 0, nonce: [UInt8], sentAt: UInt64) {
    self.kind = kind
    self.flags = flags
    self.nonce = nonce
    self.sentAt = sentAt
  }
}

/// The sizes sealed datagrams are padded to, so that a datagram's length says little more
/// than its order of magnitude: powers of two from 128 bytes up to the transport's limit
/// (the limit itself for the largest). A who-has, an `iHave` and a small query all take 128.
enum PeerPadding {
  static let smallest = 128

  /// The padded size of a datagram of `length` bytes on a transport of at most `limit`
  /// (never less than `length`: a caller checks `length <= limit` first).
  static func size(of length: Int, limit: Int) -> Int {
    var bucket = smallest
    while bucket < length { bucket <<= 1 }
    return max(min(bucket, limit), length)
  }
}

/// Seals and opens datagrams under a project's ``PeerKeys``.
struct PeerSealer: Sendable {
  let keys: PeerKeys

  /// `body` sealed with the send time `now` behind a fresh header of `kind` (with `flags`),
  /// padded for a transport of at most `limit` bytes.
  func seal(
    kind: PeerMessageKind, flags: UInt8 = 0, body: [UInt8], now: Date,
    limit: Int = PeerLimits.maximumDatagramSize
  ) throws -> [UInt8] {
    try seal(
      kind: kind, flags: flags, body: body, sentAt: PeerClock.milliseconds(now), limit: limit)
  }

  /// `body` sealed with the send time `sentAt` (ms since 1970) behind a fresh header of
  /// `kind` (with `flags`), padded for a transport of at most `limit` bytes.
  func seal(
    kind: PeerMessageKind, flags: UInt8 = 0, body: [UInt8], sentAt: UInt64,
    limit: Int = PeerLimits.maximumDatagramSize
  ) throws -> [UInt8] {
    let nonce = ChaChaPoly.Nonce()
    let header = PeerHeader(kind: kind, flags: flags, nonce: Array(nonce), sentAt: sentAt)
    let headerBytes = header.bytes(keys: keys)
    let padded = PeerPadding.size(of: body.count + PeerHeader.overhead, limit: limit)
    var plaintext = ByteWriter(capacity: padded - PeerHeader.size - PeerHeader.sealTagSize)
    plaintext.u64(header.sentAt)
    plaintext.u32(UInt32(body.count))
    plaintext.raw(body)
    plaintext.raw([UInt8](repeating: 0, count: padded - body.count - PeerHeader.overhead))
    let box = try ChaChaPoly.seal(
      plaintext.bytes, using: keys.sealingKey, nonce: nonce, authenticating: headerBytes)
    return headerBytes + Array(box.ciphertext) + Array(box.tag)
  }

  /// The header (with its send time) and the opened body of `datagram`.
  /// - Throws: ``PeerWireError`` for a datagram that is not ours, of another project, or
  ///   whose seal does not open.
  func open(_ datagram: [UInt8]) throws(PeerWireError) -> (PeerHeader, [UInt8]) {
    var header = try PeerHeader(parsing: datagram, keys: keys)
    let sealedEnd = datagram.count - PeerHeader.sealTagSize
    let opened: [UInt8]
    do {
      let box = try ChaChaPoly.SealedBox(
        nonce: ChaChaPoly.Nonce(data: header.nonce),
        ciphertext: datagram[PeerHeader.size..<sealedEnd], tag: datagram[sealedEnd...])
      opened = Array(
        try ChaChaPoly.open(
          box, using: keys.sealingKey, authenticating: datagram[0..<PeerHeader.size]))
    } catch {
      throw .unauthenticated
    }
    // At least the sealed prefix: the header's length check guarantees it.
    var reader = ByteReader(opened)
    header.sentAt = try reader.u64()
    let length = Int(try reader.u32())
    guard length <= reader.remaining else { throw .invalid("body length") }
    return (header, Array(try reader.raw(length)))
  }
}

/// Times on the wire: milliseconds since 1970.
enum PeerClock {
  static func milliseconds(_ date: Date) -> UInt64 {
    UInt64(max(date.timeIntervalSince1970 * 1000, 0).rounded())
  }
}
