/// How a ``LANPeerTransport`` reaches peers: the group and port of its who-has multicasts,
/// the port it receives answers on, and the interface.
///
/// Its unicast socket (bound to every address, ``unicastPort``) sends everything, so the
/// source address of what it sends is where peers answer. The LAN medium announces that port
/// in its datagrams (``LANMulticastConfiguration/peerPort``), which is how a sighting heard
/// on the LAN carries the way back to its sender. IPv4 only for now.
public struct LANPeerConfiguration: Sendable, Hashable {
  /// The UDP port of the who-has group by default: 7173 (beside the medium's 7172).
  public static let defaultGroupPort: UInt16 = 7173

  /// The IPv4 multicast group who-has datagrams go to. Default: the medium's,
  /// 239.255.77.77.
  public var group: String
  /// The UDP port of the group, the same on every peer. Default 7173.
  public var groupPort: UInt16
  /// The UDP port unicast datagrams are received on; 0 (the default) lets the kernel choose,
  /// so several processes on one host each get their own.
  public var unicastPort: UInt16
  /// The network interface for multicast (`"eth0"`, `"lo"`); `nil` lets the kernel choose.
  public var interface: String?

  public init(
    group: String = LANMulticastConfiguration.defaultIPv4Group,
    groupPort: UInt16 = LANPeerConfiguration.defaultGroupPort, unicastPort: UInt16 = 0,
    interface: String? = nil
  ) {
    self.group = group
    self.groupPort = groupPort
    self.unicastPort = unicastPort
    self.interface = interface
  }
}
