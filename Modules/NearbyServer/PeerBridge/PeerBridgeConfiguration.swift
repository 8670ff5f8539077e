public import Core
public import PeerResolution

/// How `nearby-server` joins the peer network of one project (no server of their own: devices
/// running `nearby` in its default peer mode), so that its devices and those peers meet when
/// they hear each other.
///
/// The bridge stands among the peers for each device of the key's project that reports: it
/// answers peers asking for the device's tokens and asks the owners of tokens the device
/// heard, as a peer-mode device does, and logs the found and lost this resolves in the
/// device's event stream. One server instance bridges (the peer network is the instance's
/// LAN); its devices' reports must reach that instance.
public struct PeerBridgeConfiguration: Sendable {
  /// The project key the peers share (`nearby --api-key`), which must be a client key of this
  /// server: its project is the one bridged, and the peers' exchange is sealed under it.
  public var apiKey: String
  /// Where peers are reached (the LAN transport of the LANMulticast plugin); the bridge owns
  /// and shuts them down.
  public var transports: [any PeerTransport]
  /// The peer resolver's rules (the exchange's timing, rate limits, the engine's `lostAfter`),
  /// those of every `nearby` by default.
  public var peer: PeerResolverConfiguration
  /// How long a server device may report nothing before its stand-in among the peers is
  /// removed (made again, from the storage, at its next report). Default 10 minutes.
  public var idleLimit: Duration

  public init(
    apiKey: String, transports: [any PeerTransport], peer: PeerResolverConfiguration = .init(),
    idleLimit: Duration = .seconds(600)
  ) {
    self.apiKey = apiKey
    self.transports = transports
    self.peer = peer
    self.idleLimit = idleLimit
  }
}

/// Why the peer bridge cannot start.
public enum PeerBridgeError: Error, Sendable, Hashable, CustomStringConvertible {
  /// The key is not one of this server's, or it was revoked.
  case unknownKey
  /// The key is an admin key: every peer holds the peers' key, so it must be a client key.
  case adminKey(project: String)

  public var description: String {
    switch self {
    case .unknownKey:
      "the peer bridge's key is not an active key of this server: create a client key of the "
        + "project (nearby-server keys create --role client) and give the peers the same key"
    case .adminKey(let project):
      "the peer bridge's key is an admin key of project '\(project)': every peer holds that "
        + "key, so give it a client key (nearby-server keys create --role client)"
    }
  }
}
