public import Core

/// A `PeerTransport` (Core) on a ``MemoryPeerNetwork``. Made by
/// ``MemoryPeerNetwork/makeTransport(name:)``.
public final class MemoryPeerTransport: PeerTransport {
  public var kind: String { MemoryPeerNetwork.kind }
  public let name: String
  public var capabilities: PeerTransportCapabilities { .multicast }
  public let maximumDatagramSize: Int
  public let incoming: AsyncStream<PeerDatagram>
  /// This node's address (what a medium puts in a sighting's `returnPath`).
  public let address: PeerAddress
  private let network: MemoryPeerNetwork

  init(
    network: MemoryPeerNetwork, address: PeerAddress, name: String,
    incoming: AsyncStream<PeerDatagram>, maximumDatagramSize: Int
  ) {
    self.network = network
    self.address = address
    self.name = name
    self.incoming = incoming
    self.maximumDatagramSize = maximumDatagramSize
  }

  /// - Throws: ``MemoryPeerError``.
  public func send(_ datagram: [UInt8], to address: PeerAddress) async throws {
    try await network.send(datagram, from: self.address, to: address)
  }

  /// - Throws: ``MemoryPeerError/tooLarge(_:limit:)``.
  public func sendToAll(_ datagram: [UInt8]) async throws {
    try await network.sendToAll(datagram, from: address)
  }

  public func shutdown() async { await network.detach(address) }

  /// A node's addresses are 4 bytes; a longer one (a test's sender injected from many
  /// "ports" of one machine) belongs to the host its first 4 bytes name.
  public func host(of address: PeerAddress) -> PeerAddress {
    guard address.bytes.count > 4,
      let host = PeerAddress(transport: address.transport, bytes: Array(address.bytes.prefix(4)))
    else { return address }
    return host
  }
}
