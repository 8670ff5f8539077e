/// The radio or acoustic channels a publication or subscription may use to find nearby devices.
///
/// The default is every medium (`[.ble, .audio]`), as in the original Nearby Messages API.
/// Encoded as a list of names (`["ble", "audio"]`) so that stored strategies stay readable.
public struct DiscoveryMediums: OptionSet, Sendable, Hashable {
  public let rawValue: UInt32
  public init(rawValue: UInt32) { self.rawValue = rawValue }

  /// Bluetooth Low Energy advertisements (BlueZ).
  public static let ble = DiscoveryMediums(rawValue: 1 << 0)
  /// Near-ultrasonic audio (PulseAudio).
  public static let audio = DiscoveryMediums(rawValue: 1 << 1)

  /// Every medium: `[.ble, .audio]`.
  public static let `default`: DiscoveryMediums = [.ble, .audio]

  /// Known single mediums with their wire names, in a stable order.
  public static let named: [(name: String, medium: DiscoveryMediums)] = [
    ("ble", .ble), ("audio", .audio),
  ]

  /// Every medium this version knows by name.
  public static let known = DiscoveryMediums(rawValue: named.reduce(0) { $0 | $1.medium.rawValue })

  /// The bits of this set that name no known medium (empty for a valid set).
  public var unknown: DiscoveryMediums { subtracting(Self.known) }

  /// The wire names of the mediums in this set, in a stable order (`["ble", "audio"]`);
  /// bits without a name are left out (``Strategy/validate()`` rejects them).
  public var names: [String] {
    Self.named.filter { contains($0.medium) }.map(\.name)
  }

  /// The single mediums in this set, each as a one-element set.
  public var elements: [DiscoveryMediums] {
    Self.named.map(\.medium).filter { contains($0) }
  }

  /// Parses a wire name (`"ble"`, `"audio"`); `nil` for an unknown name.
  public init?(name: String) {
    guard let entry = Self.named.first(where: { $0.name == name }) else { return nil }
    self = entry.medium
  }
}

extension DiscoveryMediums: Codable {
  public init(from decoder: any Decoder) throws {
    var container = try decoder.unkeyedContainer()
    var result: DiscoveryMediums = []
    while !container.isAtEnd {
      let name = try container.decode(String.self)
      guard let medium = DiscoveryMediums(name: name) else {
        throw DecodingError.dataCorruptedError(
          in: container,
          debugDescription: "unknown medium \"\(name)\"; known: \(Self.named.map(\.name))")
      }
      result.insert(medium)
    }
    self = result
  }

  public func encode(to encoder: any Encoder) throws {
    var container = encoder.unkeyedContainer()
    for name in names { try container.encode(name) }
  }
}

extension DiscoveryMediums: CustomStringConvertible {
  public var description: String {
    let unknownPart = unknown.isEmpty ? [] : ["unknown(0x\(String(unknown.rawValue, radix: 16)))"]
    let parts = names + unknownPart
    return parts.isEmpty ? "none" : parts.joined(separator: ",")
  }
}
