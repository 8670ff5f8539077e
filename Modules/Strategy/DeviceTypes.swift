/// Which kinds of nearby things a subscription is interested in.
///
/// Encoded as a list of names (`["nearbyDevices", "bleBeacons"]`).
public struct DeviceTypes: NamedOptionSet, Hashable {
  public let rawValue: UInt8
  public init(rawValue: UInt8) { self.rawValue = rawValue }

  /// Other devices running Nearby that publish messages (the default).
  public static let nearbyDevices = DeviceTypes(rawValue: 1 << 0)
  /// BLE beacons (Eddystone, iBeacon) with attachments registered on the server.
  public static let bleBeacons = DeviceTypes(rawValue: 1 << 1)

  /// ``nearbyDevices``.
  public static let `default`: DeviceTypes = .nearbyDevices

  public static let named: [(name: String, option: DeviceTypes)] = [
    ("nearbyDevices", .nearbyDevices), ("bleBeacons", .bleBeacons),
  ]
}
