/// A way for peer resolution to send sealed datagrams to other devices and hear theirs: the
/// LAN (UDP), a Bluetooth GATT connection, or memory in tests.
///
/// The peer resolver knows no medium; plugins implement this protocol beside their
/// ``Medium`` the way they implement the medium itself. It stays small, like swift-log's
/// `LogHandler`: new requirements arrive with default implementations, so a transport written
/// today keeps compiling. Implementations are reference types safe to call from any task
/// (keep state in an actor or behind a lock); the resolver is the single reader of
/// ``incoming``.
///
/// A transport moves bytes only: it neither reads nor checks them (the resolver
/// authenticates every datagram), and it never blocks its caller on a slow peer.
public protocol PeerTransport: AnyObject, Sendable {
  /// The kind of address this transport understands (``PeerAddress/transport``), such as
  /// `"lan"` or `"memory"`.
  var kind: String { get }
  /// A short name for logs.
  var name: String { get }
  /// What it can do beyond sending to one address.
  var capabilities: PeerTransportCapabilities { get }
  /// The largest datagram ``send(_:to:)`` and ``sendToAll(_:)`` carry, in bytes.
  var maximumDatagramSize: Int { get }
  /// Datagrams received, with the address of their sender. The stream buffers a bounded
  /// number (the transport drops the oldest beyond it) and finishes on ``shutdown()``.
  var incoming: AsyncStream<PeerDatagram> { get }
  /// The senders of datagrams that are partly here (a chunk of a GATT read): a transport on
  /// which one datagram takes long to cross yields its sender as each part arrives, so that
  /// the resolver waits for the rest instead of asking again and being sent it all twice.
  /// Nothing in it is authenticated: the resolver waits longer for it, within a bound, and
  /// does nothing else. Read by the resolver alone; finishes on ``shutdown()``. Default: a
  /// finished stream (every datagram arrives whole).
  var arriving: AsyncStream<PeerAddress> { get }

  /// Sends `datagram` to one device.
  /// - Throws: an error saying why it could not be sent (unreachable, too large, shut down).
  func send(_ datagram: [UInt8], to address: PeerAddress) async throws
  /// Sends `datagram` to every device this transport reaches (a LAN multicast), for
  /// transports with ``PeerTransportCapabilities/multicast``. Default: throws
  /// ``ManagerError/unsupported(_:)``.
  /// - Throws: an error saying why it could not be sent.
  func sendToAll(_ datagram: [UInt8]) async throws
  /// Stops sending and receiving and releases the transport's resources; finishes
  /// ``incoming`` and ``arriving``.
  func shutdown() async
  /// The host part of `address`: what every address of one machine shares (a LAN address
  /// without its port). The peer resolver keys its rate limits and byte budgets by it, so
  /// one machine sending from many ports has one budget. Default: the address itself.
  func host(of address: PeerAddress) -> PeerAddress
}

extension PeerTransport {
  /// Datagrams arrive whole: a stream that is already finished.
  public var arriving: AsyncStream<PeerAddress> { AsyncStream { $0.finish() } }

  /// Every address is a host of its own.
  public func host(of address: PeerAddress) -> PeerAddress { address }

  /// No multicast: throws ``ManagerError/unsupported(_:)``.
  public func sendToAll(_ datagram: [UInt8]) async throws {
    throw ManagerError.unsupported("\(name) cannot send to every device")
  }
}

/// What a ``PeerTransport`` can do.
public struct PeerTransportCapabilities: OptionSet, Sendable, Hashable {
  public let rawValue: UInt8
  public init(rawValue: UInt8) { self.rawValue = rawValue }

  /// ``PeerTransport/sendToAll(_:)`` reaches every device of the segment.
  public static let multicast = PeerTransportCapabilities(rawValue: 1 << 0)
  /// Addresses cannot be forged: a datagram sent to an address reaches only the device at
  /// the other end of a connection the transport made or accepted, and a datagram's sender
  /// is that connection (a Bluetooth LE GATT link). The peer resolver then needs no proof
  /// that an address receives what is sent to it (no probe, no cookie round trip).
  public static let connected = PeerTransportCapabilities(rawValue: 1 << 1)
}

/// A datagram a ``PeerTransport`` received, with where it came from.
public struct PeerDatagram: Sendable, Hashable {
  /// The bytes as received, not checked by the transport.
  public var bytes: [UInt8]
  /// The sender's address on this transport (where an answer goes).
  public var sender: PeerAddress

  public init(bytes: [UInt8], sender: PeerAddress) {
    self.bytes = bytes
    self.sender = sender
  }
}
