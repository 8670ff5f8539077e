/// How a ``LANMulticastMedium`` reaches its peers: the multicast group and port, the network
/// interface, and how often it announces and reports.
///
/// The defaults work with nothing set up: the IPv4 organization-local group 239.255.77.77
/// (RFC 2365 scope, never routed off the site), UDP port 7172, and the interface the kernel's
/// routing table picks for the group. Datagrams always leave with a TTL (hop limit) of 1, so
/// they never cross a router.
public struct LANMulticastConfiguration: Sendable, Hashable {
  /// The IPv4 group used by default: 239.255.77.77 (organization-local scope).
  public static let defaultIPv4Group = "239.255.77.77"
  /// An IPv6 alternative: ff05::4e42:7172 (site-local scope).
  public static let defaultIPv6Group = "ff05::4e42:7172"
  /// The UDP port used by default: 7172.
  public static let defaultPort: UInt16 = 7172
  /// The environment variable that names the interface when ``interface`` is `nil`.
  public static let interfaceEnvironmentVariable = "NEARBY_LAN_INTERFACE"
  /// The hop limit of every datagram: 1 (the local segment only).
  public static let hopLimit: Int32 = 1

  /// The multicast group, as an IPv4 or IPv6 address in text form.
  public var group: String
  /// The UDP port, the same on every peer.
  public var port: UInt16
  /// The network interface to send and receive on (`"eth0"`, `"lo"`); `nil` lets the kernel
  /// choose by its routing table. ``LANMulticastMedium`` itself never reads the environment:
  /// the ``Core/MediumProvider/lan(_:)`` factory fills this from `NEARBY_LAN_INTERFACE`.
  public var interface: String?
  /// How often the current token is announced while transmitting (each announcement is one
  /// datagram of 40 bytes). Default 250 ms; a new token is announced at once.
  public var announceInterval: Duration
  /// How often the same token is reported as a sighting while it keeps being heard (the
  /// first hearing is reported at once). Default 1 s.
  public var sightingInterval: Duration
  /// The largest difference between a datagram's timestamp and this host's clock that is
  /// accepted. Default 30 s; older (or future) datagrams are dropped as replays.
  public var maximumClockSkew: Duration

  public init(
    group: String = LANMulticastConfiguration.defaultIPv4Group,
    port: UInt16 = LANMulticastConfiguration.defaultPort,
    interface: String? = nil,
    announceInterval: Duration = .milliseconds(250),
    sightingInterval: Duration = .seconds(1),
    maximumClockSkew: Duration = .seconds(30)
  ) {
    self.group = group
    self.port = port
    self.interface = interface
    self.announceInterval = announceInterval
    self.sightingInterval = sightingInterval
    self.maximumClockSkew = maximumClockSkew
  }

  /// Whether ``group`` is an IPv4 (224.0.0.0/4) or IPv6 (ff00::/8) multicast address.
  public var hasMulticastGroup: Bool { MulticastSocket.isMulticast(group) }
}
