public import Core

extension PeerCarrier {
  /// Bluetooth LE: a ``BlueZPeerTransport`` (a GATT service, and connections to the
  /// advertisers of tokens heard) on `transport`'s adapter, and the BLE medium on the same
  /// adapter advertising connectable, so hearers can connect to ask.
  ///
  /// When the transport cannot open (bluetoothd refuses the service), the medium still runs,
  /// connectable; tokens it hears are then asked by who-has on the other transports.
  public static func bluez(
    _ transport: BlueZPeerTransportConfiguration = .init()
  ) -> PeerCarrier {
    var medium = transport.bluez
    medium.connectable = true
    let provider = MediumProvider.bluez(medium)
    let adapter = medium.adapter
    return PeerCarrier(name: "ble", mediumWithoutTransport: provider) { logger in
      let opened = try await BlueZPeerTransport(configuration: transport, logger: logger)
      return Opened(
        transport: opened, medium: provider,
        description: "BLE: GATT service on \(adapter ?? "the first powered adapter")")
    }
  }
}
