/// How a ``LANMulticastMedium`` reaches its peers: the multicast group and port, the network
/// interface, how often it announces and reports, and the deployment's shared key, if any.
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
  /// the ``Core/MediumProvider/lan(_:environment:)`` factory fills this from
  /// `NEARBY_LAN_INTERFACE`.
  public var interface: String?
  /// How often the current token is announced while transmitting (each announcement is one
  /// datagram of ``announcementSize`` bytes, ``sealedAnnouncementSize`` with a
  /// ``sharedKey``, ``digestAnnouncementSize`` with a key and a digest). Default 250 ms; a
  /// new token is announced at once.
  public var announceInterval: Duration
  /// The UDP payload of one announcement without a ``sharedKey``, in bytes.
  public static var announcementSize: Int { Datagram.size }
  /// The UDP payload of one announcement sealed under a ``sharedKey``, in bytes.
  public static var sealedAnnouncementSize: Int { Datagram.sealedSize }
  /// The UDP payload of one sealed announcement that carries a digest (peer resolution's), in
  /// bytes.
  public static var digestAnnouncementSize: Int { Datagram.digestSize }
  /// How often the same token is reported as a sighting while it keeps being heard (the
  /// first hearing is reported at once). Default 1 s.
  public var sightingInterval: Duration
  /// The largest difference between a datagram's timestamp and this host's clock that is
  /// accepted. Default 30 s; older (or future) datagrams are dropped as replays.
  public var maximumClockSkew: Duration
  /// The secret shared by the deployment's devices that authenticates datagrams, or `nil`
  /// (the default): datagrams are then **not** authenticated.
  ///
  /// With a key, every datagram is sealed (ChaCha20-Poly1305, 64 bytes) under a key derived
  /// from it, and one that does not open is dropped: one made by someone who does not hold
  /// the key (even for a token they heard), altered, or sent by a medium with no key or
  /// another key. A listener without the key learns that somebody runs nearby and nothing
  /// else (not the token, the send time or the peer port). Every peer of a deployment needs
  /// the same key: a medium with a key and one without do not hear each other. In peer mode
  /// give it the project's (`PeerKeys.announcementKey`), so that only the project's devices
  /// can announce a token or name a way back.
  ///
  /// Without a key, datagrams carry a SHA-256 checksum of their public bytes, which catches
  /// corruption but not forgery: any host on the segment can announce a token it heard (or
  /// any token), as a relay could for BLE or audio. The resolver server is what judges
  /// sightings, and it counts one only while the token is current (tokens rotate at least
  /// every 15 minutes); it cannot tell a relayed sighting from a genuine one.
  public var sharedKey: LANMulticastKey?
  /// The UDP port of this device's ``LANPeerTransport`` (its ``LANPeerTransport/port``), or
  /// `nil` (the default); `PeerCarrier.lan(medium:transport:)` sets it. When set, every announcement carries it, and a medium that hears
  /// the announcement gives its sighting a `returnPath` (Core's `Sighting`): the datagram's
  /// source address with this port, where peer resolution asks the token's owner directly.
  public var peerPort: UInt16?

  /// A configuration; every argument has a default that works with nothing set up, and
  /// ``LANMulticastMedium/init(configuration:)`` checks the values. Runs anywhere.
  public init(
    group: String = LANMulticastConfiguration.defaultIPv4Group,
    port: UInt16 = LANMulticastConfiguration.defaultPort,
    interface: String? = nil,
    announceInterval: Duration = .milliseconds(250),
    sightingInterval: Duration = .seconds(1),
    maximumClockSkew: Duration = .seconds(30),
    sharedKey: LANMulticastKey? = nil,
    peerPort: UInt16? = nil
  ) {
    self.group = group
    self.port = port
    self.interface = interface
    self.announceInterval = announceInterval
    self.sightingInterval = sightingInterval
    self.maximumClockSkew = maximumClockSkew
    self.sharedKey = sharedKey
    self.peerPort = peerPort
  }

  /// Whether ``group`` is an IPv4 (224.0.0.0/4) or IPv6 (ff00::/8) multicast address.
  public var hasMulticastGroup: Bool { MulticastSocket.isMulticast(group) }
}
