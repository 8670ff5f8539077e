/// Why a ``LANMulticastMedium`` could not be made or used. Each case says how to fix it.
public enum LANMulticastError: Error, Sendable, Hashable {
  /// The configured interface does not exist; `available` lists the ones that do.
  case noSuchInterface(String, available: [String])
  /// The group is not an IPv4 or IPv6 multicast address.
  case notAMulticastGroup(String)
  /// An interval or the clock skew is not positive.
  case invalidConfiguration(String)
  /// A socket call failed with `errno` (see `errno(3)`).
  case socket(operation: String, errno: Int32)
  /// The medium was shut down.
  case shutDown
}

extension LANMulticastError: CustomStringConvertible {
  public var description: String {
    switch self {
    case .noSuchInterface(let name, let available):
      return "no network interface named \"\(name)\"; set --lan-interface or "
        + "\(LANMulticastConfiguration.interfaceEnvironmentVariable) to one of: "
        + available.joined(separator: ", ")
    case .notAMulticastGroup(let group):
      return "\(group) is not a multicast address (IPv4 224.0.0.0/4 or IPv6 ff00::/8); "
        + "the default is \(LANMulticastConfiguration.defaultIPv4Group)"
    case .invalidConfiguration(let what):
      return "invalid LAN medium configuration: \(what)"
    case .socket(let operation, let code):
      return "\(operation) failed: \(SystemErrorText.text(for: code)) (errno \(code))"
    case .shutDown:
      return "the LAN medium was shut down"
    }
  }
}
