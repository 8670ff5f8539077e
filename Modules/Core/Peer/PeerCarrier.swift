public import Logging

/// A medium that can carry a peer transport: how to open the transport, and the medium set
/// up to go with it (the LAN medium announcing the transport's port, the BLE medium
/// advertising connectable for GATT).
///
/// Plugins make carriers (`PeerCarrier.lan(…)`, `PeerCarrier.bluez(…)`); peer resolution opens
/// them (PeerResolution's `PeerResolver.assemble(_:otherMediums:configuration:logger:)`), so an
/// app, the CLI, a test and a bench set up peer mode with one call instead of wiring a port
/// into a medium by hand.
public struct PeerCarrier: Sendable {
  /// A transport that opened, with the medium that carries it.
  public struct Opened: Sendable {
    /// The transport, owned by whoever opened it (a peer resolver, once assembled).
    public var transport: any PeerTransport
    /// The medium set up for the transport; `nil` when the carrier brings no medium (the LAN
    /// transport beside a manager that does not use the LAN medium).
    public var medium: MediumProvider?
    /// One line for a log or a start note: what was opened, and where.
    public var description: String

    public init(transport: any PeerTransport, medium: MediumProvider?, description: String) {
      self.transport = transport
      self.medium = medium
      self.description = description
    }
  }

  /// A short name for logs and failures (`"lan"`, `"ble"`).
  public let name: String
  /// Opens the transport. Throws the transport's own error when it cannot.
  public let open: @Sendable (_ logger: Logger) async throws -> Opened
  /// The medium to run when the transport did not open (`nil`: none).
  public let mediumWithoutTransport: MediumProvider?

  public init(
    name: String, mediumWithoutTransport: MediumProvider?,
    open: @escaping @Sendable (_ logger: Logger) async throws -> Opened
  ) {
    self.name = name
    self.open = open
    self.mediumWithoutTransport = mediumWithoutTransport
  }

  /// This carrier with what it opens passed through `transport` and `medium` (a bench that
  /// counts datagrams, a test that observes sightings).
  public func wrapped(
    transport wrapTransport: @escaping @Sendable (any PeerTransport) -> any PeerTransport = {
      $0
    },
    medium wrapMedium: @escaping @Sendable (MediumProvider) -> MediumProvider = { $0 }
  ) -> PeerCarrier {
    let open = open
    return PeerCarrier(name: name, mediumWithoutTransport: mediumWithoutTransport.map(wrapMedium)) {
      logger in
      var opened = try await open(logger)
      opened.transport = wrapTransport(opened.transport)
      opened.medium = opened.medium.map(wrapMedium)
      return opened
    }
  }
}
