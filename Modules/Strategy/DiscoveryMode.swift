/// Whether a publication or subscription sends its device's token, listens for other tokens,
/// or both (the default).
///
/// Encoded as a list of names (`["broadcast", "scan"]`).
public struct DiscoveryMode: OptionSet, Sendable, Hashable {
  public let rawValue: UInt8
  public init(rawValue: UInt8) { self.rawValue = rawValue }

  /// Transmit this device's token so that others can hear it.
  public static let broadcast = DiscoveryMode(rawValue: 1 << 0)
  /// Listen for the tokens of other devices.
  public static let scan = DiscoveryMode(rawValue: 1 << 1)

  /// Both broadcast and scan.
  public static let `default`: DiscoveryMode = [.broadcast, .scan]

  /// Known single modes with their wire names.
  public static let named: [(name: String, mode: DiscoveryMode)] = [
    ("broadcast", .broadcast), ("scan", .scan),
  ]

  /// The wire names of the modes in this set (`["broadcast", "scan"]`).
  public var names: [String] { Self.named.filter { contains($0.mode) }.map(\.name) }

  /// Parses a wire name (`"broadcast"`, `"scan"`); `nil` for an unknown name.
  public init?(name: String) {
    guard let entry = Self.named.first(where: { $0.name == name }) else { return nil }
    self = entry.mode
  }
}

extension DiscoveryMode: Codable {
  public init(from decoder: any Decoder) throws {
    var container = try decoder.unkeyedContainer()
    var result: DiscoveryMode = []
    while !container.isAtEnd {
      let name = try container.decode(String.self)
      guard let mode = DiscoveryMode(name: name) else {
        throw DecodingError.dataCorruptedError(
          in: container, debugDescription: "unknown discovery mode \"\(name)\"")
      }
      result.insert(mode)
    }
    self = result
  }

  public func encode(to encoder: any Encoder) throws {
    var container = encoder.unkeyedContainer()
    for name in names { try container.encode(name) }
  }
}

extension DiscoveryMode: CustomStringConvertible {
  public var description: String { names.isEmpty ? "none" : names.joined(separator: ",") }
}
