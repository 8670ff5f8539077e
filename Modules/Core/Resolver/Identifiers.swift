/// A 128-bit random identifier, written as a lowercase UUID (`xxxxxxxx-xxxx-4xxx-yxxx-…`).
///
/// Held as two 64-bit words so that the resolver's many lookups hash and compare 16 bytes
/// rather than 36 characters; drawn from the system's CSPRNG (getrandom(2)).
///
/// Not a stored `UInt128`: Swift 6.3's optimized async code under-aligns 16-byte-aligned values
/// in async frames, and a captured identifier corrupted a task's frame in release builds (see
/// docs/design.md, "The release-build crash"). Two `UInt64`s have the alignment of a pointer.
public struct Identifier: Sendable, Hashable, Comparable, Codable, LosslessStringConvertible {
  /// Bits 127…64 (the first 16 hex digits).
  public let high: UInt64
  /// Bits 63…0 (the last 16 hex digits).
  public let low: UInt64

  /// The identifier whose 128 bits are `high` then `low`.
  public init(high: UInt64, low: UInt64) {
    self.high = high
    self.low = low
  }

  /// The identifier with these 128 bits (the UUID's first byte is the most significant).
  public init(bits: UInt128) {
    self.init(high: UInt64(truncatingIfNeeded: bits >> 64), low: UInt64(truncatingIfNeeded: bits))
  }

  /// The 128 bits, the UUID's first byte the most significant.
  public var bits: UInt128 { UInt128(high) << 64 | UInt128(low) }

  /// A new random identifier (UUID version 4 layout).
  public static func random() -> Identifier {
    var generator = SystemRandomNumberGenerator()
    let high = (generator.next() as UInt64) & ~0xf000 | 0x4000  // version 4
    let low = (generator.next() as UInt64) & ~(0xc000 << 48) | (0x8000 << 48)  // variant 10
    return Identifier(high: high, low: low)
  }

  /// Parses the UUID form (either case); `nil` for anything else.
  public init?(_ description: String) {
    let utf8 = Array(description.utf8)
    guard utf8.count == 36 else { return nil }
    var words: (high: UInt64, low: UInt64) = (0, 0)
    for (index, char) in utf8.enumerated() {
      if [8, 13, 18, 23].contains(index) {
        guard char == UInt8(ascii: "-") else { return nil }
        continue
      }
      let nibble: UInt8
      switch char {
      case UInt8(ascii: "0")...UInt8(ascii: "9"): nibble = char - UInt8(ascii: "0")
      case UInt8(ascii: "a")...UInt8(ascii: "f"): nibble = char - UInt8(ascii: "a") + 10
      case UInt8(ascii: "A")...UInt8(ascii: "F"): nibble = char - UInt8(ascii: "A") + 10
      default: return nil
      }
      words = (words.high << 4 | words.low >> 60, words.low << 4 | UInt64(nibble))
    }
    self.init(high: words.high, low: words.low)
  }

  public var description: String {
    let digits = Array("0123456789abcdef".utf8)
    var out: [UInt8] = []
    out.reserveCapacity(36)
    for nibbleIndex in 0..<32 {
      if [8, 12, 16, 20].contains(nibbleIndex) { out.append(UInt8(ascii: "-")) }
      let word = nibbleIndex < 16 ? high : low
      out.append(digits[Int((word >> (60 - 4 * UInt64(nibbleIndex % 16))) & 0xf)])
    }
    return String(decoding: out, as: UTF8.self)
  }

  public static func < (lhs: Identifier, rhs: Identifier) -> Bool {
    (lhs.high, lhs.low) < (rhs.high, rhs.low)
  }

  public init(from decoder: any Decoder) throws {
    let container = try decoder.singleValueContainer()
    let text = try container.decode(String.self)
    guard let identifier = Identifier(text) else {
      throw DecodingError.dataCorruptedError(
        in: container,
        debugDescription: "expected a UUID (36 characters), got \"\(text.prefix(40))\"")
    }
    self = identifier
  }

  public func encode(to encoder: any Encoder) throws {
    var container = encoder.singleValueContainer()
    try container.encode(description)
  }
}

/// An ``Identifier`` for one kind of thing, so that a device's id cannot be passed where a
/// subscription's is expected. `Tag` is an empty enum that names the kind.
public struct TaggedIdentifier<Tag>: Sendable, Hashable, Codable, LosslessStringConvertible {
  public let identifier: Identifier
  public init(_ identifier: Identifier) { self.identifier = identifier }
  public init?(_ description: String) {
    guard let identifier = Identifier(description) else { return nil }
    self.identifier = identifier
  }
  /// A new random identifier.
  public static func random() -> Self { Self(.random()) }
  public var description: String { identifier.description }
  public init(from decoder: any Decoder) throws { identifier = try Identifier(from: decoder) }
  public func encode(to encoder: any Encoder) throws { try identifier.encode(to: encoder) }
}

/// Tags of ``TaggedIdentifier``.
public enum IdentifierTag {
  public enum Device {}
  public enum Publication {}
  public enum Subscription {}
}

/// A device registered with a resolver.
public typealias DeviceID = TaggedIdentifier<IdentifierTag.Device>
/// A publication, named by the device that made it.
public typealias PublicationID = TaggedIdentifier<IdentifierTag.Publication>
/// A subscription, named by the device that made it.
public typealias SubscriptionID = TaggedIdentifier<IdentifierTag.Subscription>

/// What a device proves itself with on every call after registering.
public struct DeviceCredentials: Sendable, Hashable, Codable {
  public var id: DeviceID
  public var secret: String
  public init(id: DeviceID, secret: String) {
    self.id = id
    self.secret = secret
  }
}
