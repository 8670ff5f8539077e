/// How a subscription to BLE beacons scans.
public struct BeaconStrategy: Sendable, Hashable, Codable {
  /// Whether iBeacon frames count (false: Eddystone and AltBeacon only). Default true.
  public var includeIBeacons: Bool
  /// Prefer passive, low-power scanning where the adapter offers it. Default true.
  public var lowPowerPreferred: Bool
  /// Keep scanning for beacons while the app is in background. Default false.
  public var allowInBackground: Bool

  public init(
    includeIBeacons: Bool = true, lowPowerPreferred: Bool = true, allowInBackground: Bool = false
  ) {
    self.includeIBeacons = includeIBeacons
    self.lowPowerPreferred = lowPowerPreferred
    self.allowInBackground = allowInBackground
  }

  /// The defaults: iBeacons included, low power preferred, foreground only.
  public static let `default` = BeaconStrategy()
}
