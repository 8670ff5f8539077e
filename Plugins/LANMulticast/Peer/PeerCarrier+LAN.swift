public import Core

extension PeerCarrier {
  /// The LAN: a ``LANPeerTransport`` on `transport`'s group and interface, and, when `medium`
  /// is given, the LAN medium announcing the transport's port in its datagrams (so a token
  /// heard on the LAN is asked of its sender directly). Without `medium` the transport still
  /// carries who-has queries for tokens heard on other mediums.
  ///
  /// When the transport cannot open (a port in use, no network), the medium runs without a
  /// port to announce.
  public static func lan(
    medium: LANMulticastConfiguration?, transport: LANPeerConfiguration = LANPeerConfiguration()
  ) -> PeerCarrier {
    PeerCarrier(name: "lan", mediumWithoutTransport: medium.map { .lan($0) }) { logger in
      let opened = try LANPeerTransport(configuration: transport, logger: logger)
      var announcing = medium
      announcing?.peerPort = opened.port
      return Opened(
        transport: opened, medium: announcing.map { .lan($0) },
        description:
          "LAN: who-has on \(transport.group):\(transport.groupPort) via "
          + "\(transport.interface ?? "the routing table's interface"), answers to UDP port "
          + "\(opened.port)")
    }
  }
}
