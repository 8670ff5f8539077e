import Crypto
import Foundation

/// The fixed header every peer datagram starts with, authenticated (not encrypted) as the
/// AEAD's associated data. Nothing after it is read before the seal opens.
///
/// ```
/// offset size
///  0      2   magic "NP" (0x4e 0x50)
///  2      1   version (2)
///  3      1   kind (PeerMessageKind)
///  4      1   flags: bit 0 = a fragment (the body starts with a fragment prefix); others 0
///  5      3   reserved (0)
///  8      8   project tag (PeerKeys.projectTag)
/// 16     12   nonce (random per datagram; the ChaCha20-Poly1305 nonce)
/// 28      …   sealed: the send time (u64, milliseconds since 1970, in the receiver's clock
///             as far as the sender knows it), then the body; then the 16-byte Poly1305 tag
/// ```
///
/// The send time is sealed (version 1 had it in the clear): a clock's skew, visible to any
/// listener, would link a device's datagrams across token rotations.
struct PeerHeader: Sendable, Hashable {
  static let magic: [UInt8] = [0x4e, 0x50]
  static let version: UInt8 = 2
  /// The header in the clear.
  static let size = 28
  /// The sealed send time before the body.
  static let sealedTimeSize = 8
  static let tagSize = 16
  /// What a datagram carries besides its body: header, sealed send time, tag.
  static let overhead = size + sealedTimeSize + tagSize
  /// Flag bit 0: the body is one fragment of a larger message (see ``Fragments``).
  static let fragmentFlag: UInt8 = 0x01

  var kind: PeerMessageKind
  var flags: UInt8 = 0
  var projectTag: UInt64
  var nonce: [UInt8]
  /// The sealed send time: 0 until the datagram is opened.
  var sentAt: UInt64

  var bytes: [UInt8] {
    var writer = ByteWriter(capacity: Self.size)
    writer.raw(Self.magic)
    writer.u8(Self.version)
    writer.u8(kind.rawValue)
    writer.u8(flags)
    writer.raw([0, 0, 0])
    writer.u64(projectTag)
    writer.raw(nonce)
    return writer.bytes
  }

  /// Reads the header of `datagram`, checking only what is cheap: length, magic, version,
  /// kind and project tag. The send time is sealed: ``PeerSealer/open(_:)`` sets it.
  init(parsing datagram: [UInt8], projectTag expected: UInt64) throws(PeerWireError) {
    guard datagram.count >= Self.overhead else { throw .truncated }
    var reader = ByteReader(datagram)
    guard Array(try reader.raw(2)) == Self.magic, try reader.u8() == Self.version else {
      throw .notPeerDatagram
    }
    guard let kind = PeerMessageKind(rawValue: try reader.u8()) else { throw .invalid("kind") }
    let flags = try reader.u8()
    guard flags & ~Self.fragmentFlag == 0 else { throw .invalid("flags") }
    _ = try reader.raw(3)
    let tag = try reader.u64()
    guard tag == expected else { throw .otherProject }
    self.kind = kind
    self.flags = flags
    self.projectTag = tag
    self.nonce = Array(try reader.raw(12))
    self.sentAt = 0
  }

  init(
    kind: PeerMessageKind, flags: UInt8 = 0, projectTag: UInt64, nonce: [UInt8], sentAt: UInt64
  ) {
    self.kind = kind
    self.flags = flags
    self.projectTag = projectTag
    self.nonce = nonce
    self.sentAt = sentAt
  }
}

/// Seals and opens datagrams under a project's ``PeerKeys``.
struct PeerSealer: Sendable {
  let keys: PeerKeys

  /// `body` sealed with the send time `now` behind a fresh header of `kind` (with `flags`).
  func seal(kind: PeerMessageKind, flags: UInt8 = 0, body: [UInt8], now: Date) throws -> [UInt8] {
    try seal(kind: kind, flags: flags, body: body, sentAt: PeerClock.milliseconds(now))
  }

  /// `body` sealed with the send time `sentAt` (ms since 1970) behind a fresh header of
  /// `kind` (with `flags`).
  func seal(kind: PeerMessageKind, flags: UInt8 = 0, body: [UInt8], sentAt: UInt64) throws
    -> [UInt8]
  {
    let nonce = ChaChaPoly.Nonce()
    let header = PeerHeader(
      kind: kind, flags: flags, projectTag: keys.projectTag, nonce: Array(nonce),
      sentAt: sentAt)
    let headerBytes = header.bytes
    var plaintext = ByteWriter(capacity: PeerHeader.sealedTimeSize + body.count)
    plaintext.u64(header.sentAt)
    plaintext.raw(body)
    let box = try ChaChaPoly.seal(
      plaintext.bytes, using: keys.sealingKey, nonce: nonce, authenticating: headerBytes)
    return headerBytes + Array(box.ciphertext) + Array(box.tag)
  }

  /// The header (with its send time) and the opened body of `datagram`.
  /// - Throws: ``PeerWireError`` for a datagram that is not ours, of another project, or
  ///   whose seal does not open.
  func open(_ datagram: [UInt8]) throws(PeerWireError) -> (PeerHeader, [UInt8]) {
    var header = try PeerHeader(parsing: datagram, projectTag: keys.projectTag)
    let sealedEnd = datagram.count - PeerHeader.tagSize
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
    // At least the send time: the header's length check guarantees it.
    var reader = ByteReader(opened)
    header.sentAt = try reader.u64()
    return (header, Array(opened[PeerHeader.sealedTimeSize...]))
  }
}

/// Times on the wire: milliseconds since 1970.
enum PeerClock {
  static func milliseconds(_ date: Date) -> UInt64 {
    UInt64(max(date.timeIntervalSince1970 * 1000, 0).rounded())
  }
}
