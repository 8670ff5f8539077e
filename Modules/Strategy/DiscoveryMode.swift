/// Whether a publication or subscription sends its device's token, listens for other tokens,
/// or both (the default).
///
/// Encoded as a list of names (`["broadcast", "scan"]`).
public struct DiscoveryMode: NamedOptionSet, Hashable {
  public let rawValue: UInt8
  public init(rawValue: UInt8) { self.rawValue = rawValue }

  /// Transmit this device's token so that others can hear it.
  public static let broadcast = DiscoveryMode(rawValue: 1 << 0)
  /// Listen for the tokens of other devices.
  public static let scan = DiscoveryMode(rawValue: 1 << 1)

  /// Both broadcast and scan.
  public static let `default`: DiscoveryMode = [.broadcast, .scan]

  public static let named: [(name: String, option: DiscoveryMode)] = [
    ("broadcast", .broadcast), ("scan", .scan),
  ]
}
