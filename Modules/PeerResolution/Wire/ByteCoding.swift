/// Appends big-endian fields to a byte array: what the wire format is written with.
struct ByteWriter {
  private(set) var bytes: [UInt8] = []

  init(capacity: Int = 256) { bytes.reserveCapacity(capacity) }

  mutating func u8(_ value: UInt8) { bytes.append(value) }

  mutating func u16(_ value: UInt16) { integer(value) }

  mutating func u32(_ value: UInt32) { integer(value) }

  mutating func u64(_ value: UInt64) { integer(value) }

  mutating func raw(_ data: some Sequence<UInt8>) { bytes.append(contentsOf: data) }

  /// A length of one byte, then the UTF-8 of `text` (at most 255 bytes: callers check).
  mutating func shortString(_ text: String) {
    let utf8 = Array(text.utf8)
    precondition(utf8.count <= 255, "shortString longer than 255 bytes")
    u8(UInt8(utf8.count))
    raw(utf8)
  }

  /// A four-byte length, then the bytes.
  mutating func longBytes(_ data: some Collection<UInt8>) {
    u32(UInt32(data.count))
    raw(data)
  }

  private mutating func integer<T: FixedWidthInteger>(_ value: T) {
    var big = value.bigEndian
    withUnsafeBytes(of: &big) { bytes.append(contentsOf: $0) }
  }
}

/// Reads big-endian fields from bytes, throwing ``PeerWireError/truncated`` rather than reading
/// past the end. Every length it reads is checked against what is left before it is used.
struct ByteReader {
  private let bytes: [UInt8]
  private(set) var offset: Int

  init(_ bytes: [UInt8], offset: Int = 0) {
    self.bytes = bytes
    self.offset = offset
  }

  var remaining: Int { bytes.count - offset }
  var isAtEnd: Bool { offset == bytes.count }

  mutating func u8() throws(PeerWireError) -> UInt8 { try integer() }

  mutating func u16() throws(PeerWireError) -> UInt16 { try integer() }

  mutating func u32() throws(PeerWireError) -> UInt32 { try integer() }

  mutating func u64() throws(PeerWireError) -> UInt64 { try integer() }

  mutating func raw(_ count: Int) throws(PeerWireError) -> ArraySlice<UInt8> {
    guard count >= 0, count <= remaining else { throw .truncated }
    defer { offset += count }
    return bytes[offset..<offset + count]
  }

  /// A one-byte length and that many bytes of UTF-8, at most `limit` characters.
  mutating func shortString(limit: Int, field: String) throws(PeerWireError) -> String {
    let count = Int(try u8())
    let utf8 = try raw(count)
    guard let text = String(validating: utf8, as: UTF8.self), text.count <= limit else {
      throw .invalid(field)
    }
    return text
  }

  /// A four-byte length (at most `limit`) and that many bytes.
  mutating func longBytes(limit: Int, field: String) throws(PeerWireError) -> [UInt8] {
    let count = Int(try u32())
    guard count <= limit else { throw .tooLarge(field) }
    return Array(try raw(count))
  }

  private mutating func integer<T: FixedWidthInteger>() throws(PeerWireError) -> T {
    let size = MemoryLayout<T>.size
    let slice = try raw(size)
    return slice.reduce(T.zero) { $0 << 8 | T($1) }
  }
}

/// Why a datagram was not accepted. Every case is counted (``PeerCounters``), never thrown
/// past the resolver.
public enum PeerWireError: Error, Sendable, Hashable {
  /// It ended before a field did.
  case truncated
  /// Larger than a limit; the text names the field.
  case tooLarge(String)
  /// A field's value is not allowed; the text names the field.
  case invalid(String)
  /// Not a peer datagram (magic) or of a version this build does not speak.
  case notPeerDatagram
  /// Another project's tag.
  case otherProject
  /// The seal did not open: forged, corrupted, or sealed under another key.
  case unauthenticated
  /// Sent more than the clock window away from the receiver's time.
  case stale
  /// The same nonce again.
  case replayed
}
