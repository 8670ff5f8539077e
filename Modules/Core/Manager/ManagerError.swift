/// Why a ``MessageManager`` call was refused.
public enum ManagerError: Error, Sendable, Hashable {
  /// The API key is empty. Keys are issued by the resolver server (`nearby server keys create`).
  case emptyAPIKey
  /// The manager was shut down.
  case shutDown
  /// A subscription must look for at least one device type.
  case noDeviceTypes
  /// The event buffer of a subscription must hold at least one event.
  case invalidEventBufferSize(Int)
  /// A feature this build does not offer yet; the text says which.
  case unsupported(String)
  /// A configuration setting is out of range; the text names it and the rule.
  case invalidConfiguration(String)
}

extension ManagerError: CustomStringConvertible {
  public var description: String {
    switch self {
    case .emptyAPIKey:
      "the API key is empty: pass the project's key (create one with `nearby server keys create`)"
    case .shutDown: "the message manager was shut down"
    case .noDeviceTypes: "a subscription needs at least one device type (nearbyDevices, bleBeacons)"
    case .invalidEventBufferSize(let size):
      "eventBufferSize must be at least 1, got \(size)"
    case .unsupported(let what): "not supported yet: \(what)"
    case .invalidConfiguration(let why): "invalid configuration: \(why)"
    }
  }
}
