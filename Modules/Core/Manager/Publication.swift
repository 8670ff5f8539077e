public import Strategy

/// A message being published. It stays published until ``cancel()``, until its TTL runs out,
/// or until the last reference to it goes away.
///
/// Prefer the scoped form, ``MessageManager/withPublication(_:configure:_:)``, which
/// unpublishes when its closure returns or throws. A handle released without ``cancel()``
/// is still unpublished, but only eventually: `deinit` queues the release on the manager,
/// whose own task works through it, and nothing waits for that.
public final class Publication: Sendable {
  /// The publication's identifier.
  public let id: PublicationID
  /// The message published.
  public let message: Message
  /// The strategy it discovers with.
  public let strategy: Strategy
  /// Status changes: `.starting`, `.active` (or `.paused`, back and forth), then `.inactive`
  /// (the stream then finishes).
  ///
  /// Each access makes a new stream for one reader, which starts with the newest 8 statuses
  /// so far and then gets every change; two readers each see every status. Each stream
  /// keeps the newest 8 when not read. It does not keep the publication alive.
  public var statusUpdates: AsyncStream<HandleStatus> { cell.updates() }
  /// The current status.
  public var status: HandleStatus { cell.status }

  private let manager: MessageManager
  private let cell: StatusCell

  init(
    id: PublicationID, message: Message, strategy: Strategy, manager: MessageManager,
    cell: StatusCell
  ) {
    self.id = id
    self.message = message
    self.strategy = strategy
    self.manager = manager
    self.cell = cell
  }

  /// Unpublishes: subscribers that found the message get `lost`. Returns when the resolver has
  /// been told (a resolver that cannot be told is logged, not thrown: the publication is gone
  /// here either way). Calling it again does nothing. Runs on the manager's actor.
  public func cancel() async {
    await manager.unpublish(id)
  }

  deinit {
    let manager = manager
    let id = id
    if cell.status != .inactive {
      manager.inputs.release(.publication(id))
    }
  }
}
