public import Core
public import Logging

/// Peer resolution's transport over Bluetooth LE GATT, through bluetoothd: two devices with
/// no network at all still resolve each other's tokens.
///
/// As an **owner** it serves the GATT service of ``GattPeerProfile`` (registered with
/// `GattManager1.RegisterApplication` on the adapter): hearers write their datagrams into its
/// inbox and read the datagrams meant for them from its outbox. As a **hearer** it connects
/// to the advertiser of a token it heard (the sighting's `returnPath`, filled by
/// ``BlueZMedium``), writes, and reads the owner's answers. Give the medium
/// ``BlueZConfiguration/connectable`` so its own advert can be connected to.
///
/// Bounded: at most ``BlueZPeerTransportConfiguration/maximumLinks`` outgoing connections at
/// once, each with a bounded queue; what each connected hearer may have waiting is bounded too
/// (see the configuration). Sending only queues: it never waits on the radio. All work runs
/// on an internal actor and the D-Bus connection's thread.
public final class BlueZPeerTransport: PeerTransport {
  public var kind: String { BLEPeerAddress.kind }
  public let name: String
  public var capabilities: PeerTransportCapabilities { .connected }
  /// ``GattPeerProfile/maximumDatagramSize``.
  public var maximumDatagramSize: Int { GattPeerProfile.maximumDatagramSize }
  public let incoming: AsyncStream<PeerDatagram>
  /// The owners whose datagram a link is partway through reading (a read chunk that
  /// completes no datagram): a 16 KiB datagram takes about a second to read, as long as a
  /// question waits for its answer. Notified chunks are not reported (see the engine).
  public let arriving: AsyncStream<PeerAddress>
  let engine: GattPeerEngine

  /// Connects to the bus, exports the GATT service and registers it with bluetoothd.
  /// - Throws: ``DBus/DBusError`` when the bus cannot be reached, or
  ///   ``BlueZMediumError`` when bluetoothd has no such adapter or refuses the service (the
  ///   error says which). bluetoothd restarting later is not an error: the service is
  ///   registered again when it is back.
  public init(
    configuration: BlueZPeerTransportConfiguration = .init(),
    logger: Logger = Logger(label: "nearby.ble.peer")
  ) async throws {
    let (stream, continuation) = AsyncStream.makeStream(
      of: PeerDatagram.self, bufferingPolicy: .bufferingNewest(1024))
    incoming = stream
    // Reports are worth something only while new: the resolver needs to know that each link
    // is moving, so the oldest are dropped (the links share the buffer: 64 is several for
    // each of them, and one link's reports come a read round trip apart).
    let (parts, partsContinuation) = AsyncStream.makeStream(
      of: PeerAddress.self, bufferingPolicy: .bufferingNewest(64))
    arriving = parts
    name = "ble gatt \(configuration.bluez.adapter ?? "default adapter")"
    engine = try await GattPeerEngine(
      configuration: configuration, incoming: continuation, arriving: partsContinuation,
      logger: logger)
  }

  /// Queues `datagram` for the device at `address` (an advertiser: connect and write; a
  /// connected hearer: its outbox).
  /// - Throws: ``BlueZPeerTransportError``: not a BLE peer address, too large, the link's
  ///   queue full, the last connection to that device failed moments ago, too many links, or
  ///   shut down.
  public func send(_ datagram: [UInt8], to address: PeerAddress) async throws {
    try await engine.send(datagram, to: address)
  }

  /// Waits up to ``BlueZPeerTransportConfiguration/drainTimeout`` for connected hearers to
  /// read what waits for them, then disconnects every link, unregisters the service, closes
  /// the bus connection and finishes ``incoming``.
  public func shutdown() async { await engine.shutdown() }

  /// What the transport counted so far.
  public func counters() async -> BlueZPeerTransportCounters { await engine.counters }
}

/// How a ``BlueZPeerTransport`` reaches bluetoothd and how far it goes.
public struct BlueZPeerTransportConfiguration: Sendable {
  /// The bus and adapter (as the medium's: give both the same adapter).
  public var bluez: BlueZConfiguration
  /// Outgoing connections at once. Default 4.
  public var maximumLinks = 4
  /// How long a connection (and finding the service on it) may take. Default 20 s.
  public var connectTimeout: Duration = .seconds(20)
  /// An outgoing link quiet this long is disconnected. Default 10 s.
  public var idleTimeout: Duration = .seconds(10)
  /// Whether a hearer subscribes to an owner's notifications (when its outbox notifies), so
  /// that answers stream instead of taking one read round trip per 512 bytes (a 100 KiB
  /// answer in about 1.7 s instead of 4 s in the VM). Default false: the real bluetoothd
  /// (5.66, in the VM) died during a 100 KiB notified answer in two test runs out of about
  /// ten, so reads stay the default until that is understood; an owner notifies whichever
  /// hearer asks for it either way.
  public var notifications = false
  /// How long what a connected hearer has waiting is kept for it. Default 30 s.
  public var keepFor: Duration = .seconds(30)
  /// How long ``BlueZPeerTransport/shutdown()`` waits for connected hearers to read what
  /// waits for them (an unpublish's update) before the service goes. Default 3 s.
  public var drainTimeout: Duration = .seconds(3)

  public init(bluez: BlueZConfiguration = .init()) { self.bluez = bluez }
}

/// What a ``BlueZPeerTransport`` counted.
public struct BlueZPeerTransportCounters: Sendable, Hashable {
  /// Connections made, and those that failed.
  public var connects = 0
  public var connectFailures = 0
  /// Chunks written to owners and read from them (not counting empty reads).
  public var chunksWritten = 0
  public var chunksRead = 0
  /// The bytes of the chunks read from owners (flags bytes included).
  public var bytesRead = 0
  /// Links subscribed to their owner's notifications, and those whose subscription failed
  /// (they read instead: a bluetoothd or an owner that does not notify).
  public var subscriptions = 0
  public var subscriptionFailures = 0
  /// Chunks notified to listening hearers (as an owner), and chunks received as
  /// notifications (as a hearer).
  public var chunksNotified = 0
  public var chunksNotifiedIn = 0
  /// Datagrams received (from links and from connected hearers).
  public var datagramsReceived = 0
  /// Datagrams dropped: queues full, links lost, malformed chunks, expired.
  public var dropped = 0
}

/// Why a ``BlueZPeerTransport`` could not send.
public enum BlueZPeerTransportError: Error, CustomStringConvertible, Sendable {
  case notABLEAddress(PeerAddress)
  case tooLarge(bytes: Int, limit: Int)
  case queueFull(PeerAddress)
  case backingOff(PeerAddress)
  case tooManyLinks(limit: Int)
  case shutDown

  public var description: String {
    switch self {
    case .notABLEAddress(let address): "\(address) is not a BLE peer address"
    case .tooLarge(let bytes, let limit): "a datagram of \(bytes) bytes is over \(limit)"
    case .queueFull(let address): "the GATT queue for \(address) is full"
    case .backingOff(let address):
      "the last GATT connection to \(address) failed; not trying again yet"
    case .tooManyLinks(let limit): "\(limit) GATT links are open already (maximumLinks)"
    case .shutDown: "the GATT peer transport is shut down"
    }
  }
}
