public import Core
import Foundation

/// An in-memory network that carries peer datagrams between ``MemoryPeerTransport``s, for
/// tests of peer resolution: unicast to an address, multicast to every other node, partitions,
/// and a record of the latest datagrams so a test can replay or corrupt one.
///
/// Delivery is immediate (the datagram is in the receiver's
/// ``MemoryPeerTransport/incoming`` buffer when ``MemoryPeerTransport/send(_:to:)`` returns); a node's buffer keeps its newest
/// ``incomingCapacity`` datagrams.
public actor MemoryPeerNetwork {
  /// The kind of the addresses of this network.
  public static let kind = "memory"

  private struct Node {
    let name: String
    let continuation: AsyncStream<PeerDatagram>.Continuation
  }

  /// How many datagrams each node's incoming stream buffers.
  public let incomingCapacity: Int
  /// The largest datagram carried (larger ones are refused with an error).
  public let maximumDatagramSize: Int
  private var nodes: [PeerAddress: Node] = [:]
  private var cut: Set<[PeerAddress]> = []
  private var nextNode: UInt32 = 1
  /// The most datagrams ``log`` keeps (the oldest are let go first).
  public let logCapacity: Int
  /// The most bytes ``log`` keeps, all datagrams together (the oldest are let go first; the
  /// newest is always kept).
  public let logByteCapacity: Int
  /// The datagrams sent lately, oldest first, with their sender and their receivers: at most
  /// ``logCapacity`` datagrams and ``logByteCapacity`` bytes, so a long test or a flood does
  /// not grow it without bound.
  public private(set) var log: [(bytes: [UInt8], from: PeerAddress, to: [PeerAddress])] = []
  private var logBytes = 0
  private var deliveries: [PeerAddress: Int] = [:]

  /// - Parameters:
  ///   - incomingCapacity: how many datagrams each node's incoming stream buffers.
  ///   - maximumDatagramSize: the largest datagram carried.
  ///   - logCapacity: the most datagrams ``log`` keeps.
  ///   - logByteCapacity: the most bytes ``log`` keeps.
  public init(
    incomingCapacity: Int = 1024, maximumDatagramSize: Int = 65_507, logCapacity: Int = 1024,
    logByteCapacity: Int = 4 << 20
  ) {
    precondition(logCapacity > 0 && logByteCapacity > 0, "the log needs room for a datagram")
    self.incomingCapacity = incomingCapacity
    self.maximumDatagramSize = maximumDatagramSize
    self.logCapacity = logCapacity
    self.logByteCapacity = logByteCapacity
  }

  /// A transport attached to this network, named `name` (for logs).
  public func makeTransport(name: String) -> MemoryPeerTransport {
    let id = nextNode
    nextNode += 1
    let address = PeerAddress(
      transport: Self.kind, bytes: withUnsafeBytes(of: id.bigEndian) { Array($0) })!
    let (stream, continuation) = AsyncStream.makeStream(
      of: PeerDatagram.self, bufferingPolicy: .bufferingNewest(incomingCapacity))
    nodes[address] = Node(name: name, continuation: continuation)
    return MemoryPeerTransport(
      network: self, address: address, name: "memory \(name)", incoming: stream,
      maximumDatagramSize: maximumDatagramSize)
  }

  /// Stops `a` and `b` from reaching each other (both ways).
  public func partition(_ a: PeerAddress, _ b: PeerAddress) { cut.insert(Self.pair(a, b)) }

  /// Undoes ``partition(_:_:)``.
  public func heal(_ a: PeerAddress, _ b: PeerAddress) { cut.remove(Self.pair(a, b)) }

  /// Delivers `bytes` to `to` as if `from` had sent them (a test's hostile or replayed
  /// datagram); `from` need not be a node.
  public func inject(_ bytes: [UInt8], from: PeerAddress, to: PeerAddress) {
    deliver(PeerDatagram(bytes: bytes, sender: from), to: to)
  }

  /// How many datagrams reached the incoming buffer of the node at `address` (sent to it,
  /// multicast or injected), less those its full buffer let go unread: what its reader has
  /// taken, or will, once the network is at rest.
  public func delivered(to address: PeerAddress) -> Int { deliveries[address, default: 0] }

  private func deliver(_ datagram: PeerDatagram, to address: PeerAddress) {
    if case .enqueued = nodes[address]?.continuation.yield(datagram) {
      deliveries[address, default: 0] += 1
    }
  }

  func send(_ bytes: [UInt8], from: PeerAddress, to: PeerAddress) throws {
    guard bytes.count <= maximumDatagramSize else {
      throw MemoryPeerError.tooLarge(bytes.count, limit: maximumDatagramSize)
    }
    guard nodes[to] != nil else { throw MemoryPeerError.unreachable(to) }
    record(bytes, from: from, to: [to])
    guard !cut.contains(Self.pair(from, to)) else { return }
    deliver(PeerDatagram(bytes: bytes, sender: from), to: to)
  }

  func sendToAll(_ bytes: [UInt8], from: PeerAddress) throws {
    guard bytes.count <= maximumDatagramSize else {
      throw MemoryPeerError.tooLarge(bytes.count, limit: maximumDatagramSize)
    }
    let receivers = nodes.keys.filter { $0 != from && !cut.contains(Self.pair(from, $0)) }
      .sorted { $0.bytes.lexicographicallyPrecedes($1.bytes) }
    record(bytes, from: from, to: receivers)
    for address in receivers {
      deliver(PeerDatagram(bytes: bytes, sender: from), to: address)
    }
  }

  /// Appends to ``log``, letting the oldest go past its bounds.
  private func record(_ bytes: [UInt8], from: PeerAddress, to: [PeerAddress]) {
    log.append((bytes, from, to))
    logBytes += bytes.count
    var excess = 0
    var excessBytes = 0
    while log.count - excess > logCapacity
      || (logBytes - excessBytes > logByteCapacity && log.count - excess > 1)
    {
      excessBytes += log[excess].bytes.count
      excess += 1
    }
    if excess > 0 {
      log.removeFirst(excess)
      logBytes -= excessBytes
    }
  }

  func detach(_ address: PeerAddress) {
    nodes.removeValue(forKey: address)?.continuation.finish()
  }

  private static func pair(_ a: PeerAddress, _ b: PeerAddress) -> [PeerAddress] {
    a.bytes.lexicographicallyPrecedes(b.bytes) ? [a, b] : [b, a]
  }
}

/// Why a ``MemoryPeerTransport`` could not send.
public enum MemoryPeerError: Error, Sendable, Hashable {
  /// Larger than the network carries.
  case tooLarge(Int, limit: Int)
  /// No node has that address (never made, or shut down).
  case unreachable(PeerAddress)
}
