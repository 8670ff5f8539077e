import Foundation

/// A device registered with a resolver.
public struct DeviceID: RawRepresentable, Sendable, Hashable, Codable, CustomStringConvertible {
  public let rawValue: String
  public init(rawValue: String) { self.rawValue = rawValue }
  /// A new random identifier.
  public static func random() -> DeviceID { DeviceID(rawValue: UUID().uuidString.lowercased()) }
  public var description: String { rawValue }
}

/// A publication, named by the device that made it.
public struct PublicationID: RawRepresentable, Sendable, Hashable, Codable,
  CustomStringConvertible
{
  public let rawValue: String
  public init(rawValue: String) { self.rawValue = rawValue }
  /// A new random identifier.
  public static func random() -> PublicationID {
    PublicationID(rawValue: UUID().uuidString.lowercased())
  }
  public var description: String { rawValue }
}

/// A subscription, named by the device that made it.
public struct SubscriptionID: RawRepresentable, Sendable, Hashable, Codable,
  CustomStringConvertible
{
  public let rawValue: String
  public init(rawValue: String) { self.rawValue = rawValue }
  /// A new random identifier.
  public static func random() -> SubscriptionID {
    SubscriptionID(rawValue: UUID().uuidString.lowercased())
  }
  public var description: String { rawValue }
}

/// What a device proves itself with on every call after registering.
public struct DeviceCredentials: Sendable, Hashable, Codable {
  public var id: DeviceID
  public var secret: String
  public init(id: DeviceID, secret: String) {
    self.id = id
    self.secret = secret
  }
}
