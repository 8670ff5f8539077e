/// Which kinds of nearby things a subscription is interested in.
///
/// Encoded as a list of names (`["nearbyDevices", "bleBeacons"]`).
public struct DeviceTypes: OptionSet, Sendable, Hashable {
  public let rawValue: UInt8
  public init(rawValue: UInt8) { self.rawValue = rawValue }

  /// Other devices running Nearby that publish messages (the default).
  public static let nearbyDevices = DeviceTypes(rawValue: 1 << 0)
  /// BLE beacons (Eddystone, iBeacon) with attachments registered on the server.
  public static let bleBeacons = DeviceTypes(rawValue: 1 << 1)

  /// ``nearbyDevices``.
  public static let `default`: DeviceTypes = .nearbyDevices

  static let named: [(name: String, types: DeviceTypes)] = [
    ("nearbyDevices", .nearbyDevices), ("bleBeacons", .bleBeacons),
  ]

  /// The names of the types in this set.
  public var names: [String] { Self.named.filter { contains($0.types) }.map(\.name) }
}

extension DeviceTypes: Codable {
  public init(from decoder: any Decoder) throws {
    var container = try decoder.unkeyedContainer()
    var result: DeviceTypes = []
    while !container.isAtEnd {
      let name = try container.decode(String.self)
      guard let entry = Self.named.first(where: { $0.name == name }) else {
        throw DecodingError.dataCorruptedError(
          in: container, debugDescription: "unknown device type \"\(name)\"")
      }
      result.insert(entry.types)
    }
    self = result
  }

  public func encode(to encoder: any Encoder) throws {
    var container = encoder.unkeyedContainer()
    for name in names { try container.encode(name) }
  }
}
