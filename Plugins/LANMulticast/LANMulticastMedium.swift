public import Core
import Foundation
public import Strategy
public import Tokens

/// A `Medium` (Core) over UDP multicast on the local network segment: it announces the
/// current token in a small datagram (see the wire format in `Datagram.swift`) several times
/// a second, and reports the tokens of peers it hears.
///
/// Datagrams are authenticated only when the deployment sets a
/// ``LANMulticastConfiguration/sharedKey``: each is then sealed under that key, and one that
/// does not open is dropped. Without a key they carry a checksum that
/// anyone can compute: corrupted datagrams are dropped, but any host on the segment can
/// announce any token (one it heard, typically), and the resolver server judges the
/// sightings. Either way, datagrams older than ``LANMulticastConfiguration/maximumClockSkew``
/// and repeated ones are dropped, and a new token is sent under a new random sender id with
/// its counter restarted, so the datagrams' contents do not link a device's tokens across
/// rotations (its IP and Ethernet addresses still do). Datagrams leave with hop limit 1 on
/// one interface and never cross a router.
///
/// Socket work runs on a dedicated thread of its own (`poll(2)` on the socket), never on
/// Swift's cooperative pool; the methods here only change what that thread does, so they
/// return at once and may be called from any task.
public final class LANMulticastMedium: Medium {
  public let kind: DiscoveryMediums = .lan
  public let name: String
  public let capabilities: MediumCapabilities = [.broadcast, .scan]
  public let sightings: AsyncStream<Sighting>
  public let statusUpdates: AsyncStream<MediumStatus>
  /// The configuration the medium runs with.
  public let configuration: LANMulticastConfiguration

  private let thread: IOThread

  /// Opens the socket, joins the group and starts the medium's thread.
  /// - Throws: ``LANMulticastError`` when the interface does not exist, the group is not a
  ///   multicast address, an interval is not positive, or a socket call fails.
  public init(configuration: LANMulticastConfiguration = LANMulticastConfiguration())
    throws(LANMulticastError)
  {
    for (label, value) in [
      ("announceInterval", configuration.announceInterval),
      ("sightingInterval", configuration.sightingInterval),
      ("maximumClockSkew", configuration.maximumClockSkew),
    ] where value <= .zero {
      throw .invalidConfiguration("\(label) must be positive, got \(value)")
    }
    self.configuration = configuration
    name =
      "lan \(configuration.interface ?? "default") \(configuration.group) port \(configuration.port)"
    let socket = try MulticastSocket.open(configuration)
    let (sightings, sightingsContinuation) = AsyncStream.makeStream(
      of: Sighting.self, bufferingPolicy: .bufferingNewest(4096))
    let (statuses, statusContinuation) = AsyncStream.makeStream(
      of: MediumStatus.self, bufferingPolicy: .bufferingNewest(16))
    self.sightings = sightings
    statusUpdates = statuses
    do {
      thread = try IOThread(
        socket: socket, configuration: configuration, name: name,
        sightings: sightingsContinuation, statuses: statusContinuation)
    } catch {
      socket.close()
      throw error
    }
    thread.start()
  }

  /// Starts announcing `token` (at once, then every
  /// ``LANMulticastConfiguration/announceInterval``), replacing the previous token.
  /// - Throws: ``LANMulticastError/shutDown`` after ``shutdown()``.
  public func transmit(_ token: Token) async throws {
    try await transmit(token, digest: nil)
  }

  /// Starts announcing `token` with `digest` beside it, sealed (version 4 datagrams); without
  /// a ``LANMulticastConfiguration/sharedKey`` the digest is left out, since an unsealed one
  /// anyone could forge. A new token or digest is announced at once.
  /// - Throws: ``LANMulticastError/shutDown`` after ``shutdown()``.
  public func transmit(_ token: Token, digest: HandlesDigest?) async throws {
    try checkRunning()
    let carried = configuration.sharedKey == nil ? 0 : digest?.value ?? 0
    thread.update {
      $0.token = token
      $0.digest = carried
      $0.announceNow = true
    }
  }

  /// Stops announcing; peers stop hearing the token at once (no datagram is in flight for
  /// longer than the network delay).
  public func stopTransmitting() async {
    thread.update { $0.token = nil }
  }

  /// Starts reporting the tokens heard.
  /// - Throws: ``LANMulticastError/shutDown`` after ``shutdown()``.
  public func startScanning() async throws {
    try checkRunning()
    thread.update {
      if !$0.scanning { $0.scanningRestarted = true }
      $0.scanning = true
    }
  }

  /// Stops reporting; datagrams still arriving are read and dropped.
  public func stopScanning() async {
    thread.update { $0.scanning = false }
  }

  /// Stops the thread, closes the socket and finishes both streams; returns when done.
  public func shutdown() async {
    await thread.stop()
  }

  deinit { thread.requestStop() }

  private func checkRunning() throws(LANMulticastError) {
    if thread.state.withLock({ $0.stopping || $0.finished }) { throw .shutDown }
  }
}
