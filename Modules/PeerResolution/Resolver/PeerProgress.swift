public import Core

/// How far a ``PeerResolver`` is through the work it was given (``PeerResolver/progress()``).
///
/// A resolver is at rest when it handled every datagram its transports delivered, has
/// nothing left to send, and each stream's reader took every event yielded to it; a network
/// of resolvers is at rest when each is and no counter moves between two looks. Tests use it
/// to run a network of resolvers on a hand-moved clock until nothing is left to happen.
public struct PeerProgress: Sendable, Hashable {
  /// Datagrams taken from the transports and handled (accepted or dropped); the same as
  /// ``PeerCounters/received``.
  public var datagramsHandled: Int
  /// Datagrams queued to send that the transports have not yet taken or refused.
  public var sendsPending: Int
  /// Events yielded to each local device's current stream (from ``PeerResolver`` 's
  /// `events(for:)`), since that stream was opened.
  public var eventsStreamed: [DeviceID: Int]

  public init(datagramsHandled: Int, sendsPending: Int, eventsStreamed: [DeviceID: Int]) {
    self.datagramsHandled = datagramsHandled
    self.sendsPending = sendsPending
    self.eventsStreamed = eventsStreamed
  }
}
