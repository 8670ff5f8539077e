/// A 128-bit random identifier, written as a lowercase UUID (`xxxxxxxx-xxxx-4xxx-yxxx-…`).
///
/// Held as a `UInt128` so that the resolver's many lookups hash and compare 16 bytes rather
/// than 36 characters; drawn from the system's CSPRNG (getrandom(2)).
public struct Identifier: Sendable, Hashable, Comparable, Codable, LosslessStringConvertible {
  public let bits: UInt128

  public init(bits: UInt128) { self.bits = bits }

  /// A new random identifier (UUID version 4 layout).
  public static func random() -> Identifier {
    var generator = SystemRandomNumberGenerator()
    var bits = UInt128(generator.next() as UInt64) << 64 | UInt128(generator.next() as UInt64)
    bits = (bits & ~(UInt128(0xf000) << 64)) | (UInt128(0x4000) << 64)  // version 4
    bits = (bits & ~(UInt128(0xc000) << 48)) | (UInt128(0x8000) << 48)  // variant 10
    return Identifier(bits: bits)
  }

  /// Parses the UUID form (either case); `nil` for anything else.
  public init?(_ description: String) {
    let utf8 = Array(description.utf8)
    guard utf8.count == 36 else { return nil }
    var bits: UInt128 = 0
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
      bits = bits << 4 | UInt128(nibble)
    }
    self.bits = bits
  }

  public var description: String {
    let digits = Array("0123456789abcdef".utf8)
    var out: [UInt8] = []
    out.reserveCapacity(36)
    for nibbleIndex in 0..<32 {
      if [8, 12, 16, 20].contains(nibbleIndex) { out.append(UInt8(ascii: "-")) }
      out.append(digits[Int((bits >> (124 - 4 * UInt128(nibbleIndex))) & 0xf)])
    }
    return String(decoding: out, as: UTF8.self)
  }

  public static func < (lhs: Identifier, rhs: Identifier) -> Bool { lhs.bits < rhs.bits }

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
