public import BLEBlueZ
public import Core

/// A GATT peer transport that also shuts down the medium whose sighting gave its peer's
/// address: what a conformance check shuts down is the whole of one side.
public final class TransportWithMedium: PeerTransport {
  public let inner: BlueZPeerTransport
  public let medium: BlueZMedium

  public init(_ inner: BlueZPeerTransport, medium: BlueZMedium) {
    self.inner = inner
    self.medium = medium
  }

  public var kind: String { inner.kind }
  public var name: String { inner.name }
  public var capabilities: PeerTransportCapabilities { inner.capabilities }
  public var maximumDatagramSize: Int { inner.maximumDatagramSize }
  public var incoming: AsyncStream<PeerDatagram> { inner.incoming }
  public var arriving: AsyncStream<PeerAddress> { inner.arriving }

  public func send(_ datagram: [UInt8], to address: PeerAddress) async throws {
    try await inner.send(datagram, to: address)
  }

  public func shutdown() async {
    await inner.shutdown()
    await medium.shutdown()
  }
}
