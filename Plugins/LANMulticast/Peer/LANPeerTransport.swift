public import Core
import Foundation
import Glibc
public import Logging
import Synchronization

/// Peer resolution's transport over the LAN: UDP unicast to a peer's address and a multicast
/// who-has to the segment (hop limit 1), IPv4.
///
/// `PeerCarrier.lan(medium:transport:)` opens one and gives its ``port`` to the LAN medium
/// (``LANMulticastConfiguration/peerPort``), so sightings heard on the LAN carry the way back;
/// peer resolution's `PeerResolver.assemble` opens the carrier. Made by hand, it goes to
/// `ResolverChoice.peer(transports:)` the same way, one per process. One thread blocks in `poll(2)` on its two sockets and a
/// wake-up pipe and feeds ``incoming``; sending never blocks (`MSG_DONTWAIT`).
public final class LANPeerTransport: PeerTransport {
  public var kind: String { LANPeerAddress.kind }
  public let name: String
  public var capabilities: PeerTransportCapabilities { .multicast }
  /// The largest UDP payload over IPv4.
  public var maximumDatagramSize: Int { 65_507 }
  public let incoming: AsyncStream<PeerDatagram>
  /// The UDP port unicast datagrams arrive on.
  public let port: UInt16
  private let receiver: PeerReceiver

  /// Opens the sockets and starts receiving.
  /// - Parameters:
  ///   - configuration: the group, ports and interface.
  ///   - logger: where the receiving thread logs (an error when `poll(2)` fails and it stops).
  /// - Throws: ``LANMulticastError`` for an unknown interface, a group that is not IPv4
  ///   multicast, or a socket call that failed (a port in use).
  public init(
    configuration: LANPeerConfiguration = LANPeerConfiguration(),
    logger: Logger = Logger(label: "nearby.lan.peer")
  ) throws(LANMulticastError) {
    let sockets = try PeerSockets.open(configuration)
    port = sockets.port
    name = "lan peer \(configuration.interface ?? "default") port \(sockets.port)"
    let (stream, continuation) = AsyncStream.makeStream(
      of: PeerDatagram.self, bufferingPolicy: .bufferingNewest(1024))
    incoming = stream
    do {
      receiver = try PeerReceiver(sockets: sockets, incoming: continuation, logger: logger)
    } catch {
      sockets.close()
      continuation.finish()
      throw error
    }
    receiver.start()
  }

  deinit { receiver.requestStop() }

  /// - Throws: ``LANMulticastError`` for an address that is not a LAN IPv4 one, a datagram
  ///   over ``maximumDatagramSize``, a failed `sendto`, or a transport shut down.
  public func send(_ datagram: [UInt8], to address: PeerAddress) async throws {
    guard let target = LANPeerAddress.socketAddress(address) else {
      throw LANMulticastError.invalidConfiguration("\(address) is not a LAN IPv4 peer address")
    }
    try receiver.send(checked(datagram), to: target)
  }

  /// - Throws: as ``send(_:to:)``.
  public func sendToAll(_ datagram: [UInt8]) async throws {
    try receiver.send(checked(datagram), to: nil)
  }

  public func shutdown() async { await receiver.stop() }

  /// The address's IPv4 address without its port: every process of one machine (and every
  /// port one attacker sends from) shares one rate limit and byte budget.
  public func host(of address: PeerAddress) -> PeerAddress {
    LANPeerAddress.host(of: address)
  }

  private func checked(_ datagram: [UInt8]) throws(LANMulticastError) -> [UInt8] {
    guard datagram.count <= maximumDatagramSize else {
      throw .invalidConfiguration(
        "a datagram of \(datagram.count) bytes is over \(maximumDatagramSize)")
    }
    return datagram
  }
}
