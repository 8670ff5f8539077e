public import Foundation

/// A random identifier for one kind of thing, so that a device's id cannot be passed where a
/// subscription's is expected. `Tag` is an empty enum that names the kind.
///
/// Held as a `Foundation.UUID` (16 bytes, so the resolver's many lookups hash and compare
/// bytes rather than text) and written as a lowercase UUID (`xxxxxxxx-xxxx-4xxx-yxxx-…`).
/// Values are plain data: use them from any thread.
public struct TaggedIdentifier<Tag>: Sendable, Hashable, Comparable, Codable,
  LosslessStringConvertible
{
  /// The identifier's 16 bytes.
  public let uuid: UUID

  /// The identifier `uuid`.
  public init(_ uuid: UUID) { self.uuid = uuid }

  /// Parses the UUID form, 36 characters in either case; `nil` for anything else.
  public init?(_ description: String) {
    guard description.utf8.count == 36, let uuid = UUID(uuidString: description),
      uuid.uuidString.caseInsensitiveCompare(description) == .orderedSame
    else { return nil }
    self.uuid = uuid
  }

  /// A new random identifier (UUID version 4, from the system's CSPRNG).
  public static func random() -> Self { Self(UUID()) }

  /// The lowercase UUID form.
  public var description: String { uuid.uuidString.lowercased() }

  /// Byte order, as the UUID's text sorts.
  public static func < (lhs: Self, rhs: Self) -> Bool { lhs.uuid < rhs.uuid }

  /// Decodes the UUID form from a string.
  ///
  /// - Throws: `DecodingError.dataCorrupted` for a string that is not a UUID.
  public init(from decoder: any Decoder) throws {
    let container = try decoder.singleValueContainer()
    let text = try container.decode(String.self)
    guard let identifier = Self(text) else {
      throw DecodingError.dataCorruptedError(
        in: container,
        debugDescription: "expected a UUID (36 characters), got \"\(text.prefix(40))\"")
    }
    self = identifier
  }

  /// Encodes the lowercase UUID form as a string.
  public func encode(to encoder: any Encoder) throws {
    var container = encoder.singleValueContainer()
    try container.encode(description)
  }
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
