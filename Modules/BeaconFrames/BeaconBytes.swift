import Tokens

/// A fixed run of up to 20 bytes kept inline (no heap allocation): the identifiers and opaque
/// fields of beacon frames — Eddystone namespace (10) and instance (6), ephemeral id (8),
/// encrypted telemetry (12), salt and MIC (2 each), iBeacon proximity UUID (16), AltBeacon
/// beacon id (20).
///
/// Text forms: ``hex`` (lowercase, no separators) and, for 16 bytes, ``uuidString``.
public struct BeaconBytes: Sendable, Hashable, RandomAccessCollection {
  /// The most bytes a value holds.
  public static let maximumCount = 20

  /// Bytes 0..<8, byte 0 the most significant; bytes past `count` are zero. Two `UInt64`s rather
  /// than a `UInt128`: a 16-byte-aligned field is under-aligned in Swift 6.3's optimized async
  /// frames (docs/design.md, "The release-build crash").
  private var head: UInt64 = 0
  /// Bytes 8..<16, byte 8 the most significant; bytes past `count` are zero.
  private var middle: UInt64 = 0
  /// Bytes 16..<20, byte 16 the most significant; bytes past `count` are zero.
  private var tail: UInt32 = 0
  private var length: UInt8 = 0

  /// The given bytes.
  /// - Throws: ``BeaconFrameError/tooManyBytes(count:maximum:)`` for more than 20 bytes.
  public init(_ bytes: some Collection<UInt8>) throws(BeaconFrameError) {
    guard bytes.count <= Self.maximumCount else {
      throw .tooManyBytes(count: bytes.count, maximum: Self.maximumCount)
    }
    for byte in bytes { append(byte) }
  }

  /// `count` bytes of `buffer` from `start`; the caller has checked the bounds. Reads 8 bytes
  /// at a time: parsing speed depends on it.
  init(_ buffer: UnsafeBufferPointer<UInt8>, from start: Int, count: Int) {
    precondition(
      start >= 0 && count >= 0 && count <= Self.maximumCount && start + count <= buffer.count,
      "BeaconBytes range outside the buffer")
    guard count > 0, let base = buffer.baseAddress else { return }
    let raw = UnsafeRawPointer(base + start)
    head = Self.word(raw, from: 0, count: Swift.min(count, 8))
    if count > 8 { middle = Self.word(raw, from: 8, count: Swift.min(count, 16) - 8) }
    var offset = 16
    while offset < count {
      tail = tail << 8 | UInt32(raw.load(fromByteOffset: offset, as: UInt8.self))
      offset += 1
    }
    if count > 16 { tail <<= 8 * (20 - count) }
    length = UInt8(count)
  }

  /// `count` (1…8) bytes from `offset`, the first in the most significant byte, zeros after.
  private static func word(_ raw: UnsafeRawPointer, from offset: Int, count: Int) -> UInt64 {
    if count == 8 { return raw.loadUnaligned(fromByteOffset: offset, as: UInt64.self).bigEndian }
    var word: UInt64 = 0
    for index in 0..<count {
      word = word << 8 | UInt64(raw.load(fromByteOffset: offset + index, as: UInt8.self))
    }
    return word << (8 * (8 - count))
  }

  private mutating func append(_ byte: UInt8) {
    let index = Int(length)
    if index < 8 {
      head |= UInt64(byte) << (8 * (7 - index))
    } else if index < 16 {
      middle |= UInt64(byte) << (8 * (15 - index))
    } else {
      tail |= UInt32(byte) << (8 * (19 - index))
    }
    length += 1
  }

  /// 0.
  public var startIndex: Int { 0 }
  /// The number of bytes.
  public var endIndex: Int { Int(length) }

  /// The byte at `position` (0 ..< count).
  public subscript(position: Int) -> UInt8 {
    precondition(position >= 0 && position < Int(length), "BeaconBytes index out of range")
    return switch position {
    case ..<8: UInt8(truncatingIfNeeded: head >> (8 * (7 - position)))
    case ..<16: UInt8(truncatingIfNeeded: middle >> (8 * (15 - position)))
    default: UInt8(truncatingIfNeeded: tail >> (8 * (19 - position)))
    }
  }

  /// The bytes as an array.
  public var bytes: [UInt8] { Array(self) }
}

extension BeaconBytes {
  /// Lowercase hex, two digits a byte, no separators.
  public var hex: String { Hex.encode(self) }

  /// For 16 bytes, the UUID form 8-4-4-4-12 in lowercase hex; `nil` for other lengths.
  public var uuidString: String? {
    guard count == 16 else { return nil }
    var text = hex
    for position in [8, 13, 18, 23] {
      text.insert("-", at: text.index(text.startIndex, offsetBy: position))
    }
    return text
  }

  /// Parses hex digits (either case); `-`, `:` and spaces between them are ignored and a
  /// leading `0x` is allowed, so a UUID's text form is accepted.
  /// - Throws: ``BeaconFrameError/invalidHex(_:)`` for an odd count or a non-hex character,
  ///   ``BeaconFrameError/tooManyBytes(count:maximum:)`` for more than 20 bytes.
  public init(hex text: some StringProtocol) throws(BeaconFrameError) {
    guard let bytes = Hex.decode(text, allowingSeparators: true) else {
      throw .invalidHex(String(text))
    }
    try self.init(bytes)
  }
}

extension BeaconBytes: CustomStringConvertible {
  public var description: String { hex }
}
