/// An option set whose single options have wire names. It is encoded as a list of names
/// (`["ble", "audio"]`), so stored strategies stay readable, and decoding an unknown name fails
/// with the known names in the message.
public protocol NamedOptionSet: OptionSet, Codable, CustomStringConvertible, Sendable
where Element == Self {
  /// The single options with their names, in a stable order.
  static var named: [(name: String, option: Self)] { get }
}

extension NamedOptionSet {
  /// The names of the options in this set, in the order of ``named``.
  public var names: [String] { Self.named.filter { contains($0.option) }.map(\.name) }

  /// The single options in this set, each as a one-element set.
  public var elements: [Self] { Self.named.map(\.option).filter { contains($0) } }

  /// The option with this wire name; `nil` for an unknown name.
  public init?(name: String) {
    guard let entry = Self.named.first(where: { $0.name == name }) else { return nil }
    self = entry.option
  }

  public init(from decoder: any Decoder) throws {
    var container = try decoder.unkeyedContainer()
    var result: Self = []
    while !container.isAtEnd {
      let name = try container.decode(String.self)
      guard let option = Self(name: name) else {
        throw DecodingError.dataCorruptedError(
          in: container,
          debugDescription: "unknown name \"\(name)\"; known: \(Self.named.map(\.name))")
      }
      result.insert(option)
    }
    self = result
  }

  public func encode(to encoder: any Encoder) throws {
    var container = encoder.unkeyedContainer()
    for name in names { try container.encode(name) }
  }

  public var description: String { names.isEmpty ? "none" : names.joined(separator: ",") }
}
