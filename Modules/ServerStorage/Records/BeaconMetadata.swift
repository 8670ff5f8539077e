/// Where a beacon is in its life (the registry's lifecycle).
public enum BeaconStatus: String, Sendable, Hashable, Codable, CaseIterable {
  /// Served: observations of it answer its attachments.
  case active
  /// Kept with its attachments, but not served until made active again.
  case inactive
  /// Retired for good: never served again, its attachments and EID key are gone, and its
  /// advertised id can never be registered again (the row stays as a tombstone).
  case decommissioned
}

/// How long a beacon is expected to stay where it is.
public enum BeaconStability: String, Sendable, Hashable, Codable, CaseIterable {
  case stable, portable, mobile, roving
}

/// What an operator records about a beacon: free text and place, checked against
/// ``BeaconMetadata/Limits``.
public struct BeaconMetadata: Sendable, Hashable, Codable {
  /// Free string properties (`key=value`), for the operator's own filtering.
  public var properties: [String: String] = [:]
  /// A place name or id (Google's registry kept a Places id here).
  public var place = ""
  /// Latitude and longitude in degrees, if known.
  public var latitude: Double?
  public var longitude: Double?
  /// The floor or level indoors, as the building names it.
  public var indoorLevel = ""
  public var expectedStability: BeaconStability?

  public init() {}

  /// The bounds of each field (bytes of UTF-8 for texts).
  public enum Limits {
    public static let maximumProperties = 32
    public static let maximumPropertyKeyBytes = 64
    public static let maximumPropertyValueBytes = 256
    public static let maximumPlaceBytes = 256
    public static let maximumIndoorLevelBytes = 64
  }

  /// Checks every field against ``Limits`` and the text rules.
  /// - Throws: ``BeaconInputError`` naming the field.
  public func check() throws(BeaconInputError) {
    guard properties.count <= Limits.maximumProperties else {
      throw .overLimit(
        "properties: \(properties.count) entries; the limit is \(Limits.maximumProperties)")
    }
    for (key, value) in properties {
      guard !key.isEmpty, !key.contains("=") else {
        throw .invalid("properties: a key is 1 or more characters without '='")
      }
      try TextRules.check(
        key, field: "properties key", maximumBytes: Limits.maximumPropertyKeyBytes)
      try TextRules.check(
        value, field: "properties[\(TextRules.printable(key))]",
        maximumBytes: Limits.maximumPropertyValueBytes)
    }
    try TextRules.check(place, field: "place", maximumBytes: Limits.maximumPlaceBytes)
    try TextRules.check(
      indoorLevel, field: "indoorLevel", maximumBytes: Limits.maximumIndoorLevelBytes)
    switch (latitude, longitude) {
    case (nil, nil): break
    case (let latitude?, let longitude?):
      guard (-90...90).contains(latitude), (-180...180).contains(longitude) else {
        throw .invalid(
          "latLng: latitude is -90 to 90 and longitude -180 to 180 degrees, got "
            + "\(latitude), \(longitude)")
      }
    default:
      throw .invalid("latLng needs both latitude and longitude")
    }
  }
}
