public import Strategy

/// A message being published. It stays published while you keep a reference to it, until
/// ``cancel()`` or its TTL runs out; releasing the last reference unpublishes it.
public final class Publication: Sendable {
  /// The publication's identifier.
  public let id: PublicationID
  /// The message published.
  public let message: Message
  /// The strategy it discovers with.
  public let strategy: Strategy
  /// Status changes: `.starting`, `.active` (or `.paused`, back and forth), then `.inactive`
  /// (the stream then finishes).
  /// Keeps the newest 8 when not read.
  public var statusUpdates: AsyncStream<HandleStatus> { cell.updates }
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
  /// been told. Calling it again does nothing.
  public func cancel() async {
    await manager.unpublish(id)
  }

  deinit {
    let manager = manager
    let id = id
    if cell.status != .inactive {
      Task { await manager.unpublish(id) }
    }
  }
}
