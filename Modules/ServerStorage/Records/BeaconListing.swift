public import Foundation

/// What `GET /v1/beacons` may narrow a listing to; every field set must hold.
public struct BeaconListFilter: Sendable, Hashable {
  public var status: BeaconStatus?
  /// A property that must have this value.
  public var property: (key: String, value: String)?
  /// An attachment of this namespace, and of this type when given.
  public var attachment: (namespace: String, type: String?)?
  /// Registered strictly after this time.
  public var registeredAfter: Date?

  public init() {}

  public static func == (a: BeaconListFilter, b: BeaconListFilter) -> Bool {
    a.status == b.status && a.property?.key == b.property?.key
      && a.property?.value == b.property?.value
      && a.attachment?.namespace == b.attachment?.namespace
      && a.attachment?.type == b.attachment?.type && a.registeredAfter == b.registeredAfter
  }

  public func hash(into hasher: inout Hasher) {
    hasher.combine(status)
    hasher.combine(property?.key)
    hasher.combine(property?.value)
    hasher.combine(attachment?.namespace)
    hasher.combine(attachment?.type)
    hasher.combine(registeredAfter)
  }
}

/// Where a listing page ends: the last beacon's registration time and name (the listing's
/// order), so the next page starts after it.
public struct BeaconListCursor: Sendable, Hashable {
  /// Seconds since 1970 as the database holds them (a `Date` would not round-trip exactly).
  public var createdAt: Double
  public var name: String

  public init(createdAt: Double, name: String) {
    self.createdAt = createdAt
    self.name = name
  }
}
