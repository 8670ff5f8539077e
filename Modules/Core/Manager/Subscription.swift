public import Tokens

/// What happens to a subscription, in order, on ``Subscription/events``.
public enum SubscriptionEvent: Sendable, Hashable {
  /// A message is nearby (reported once until it is lost).
  case found(Message)
  /// A found message is gone: out of range, unpublished or expired.
  case lost(Message)
  /// The subscription's TTL ran out; the stream finishes after this.
  case expired
  /// A found beacon attachment's estimated distance changed (beacon subscriptions only):
  /// reported after found and then whenever the estimate moves by 10 % and 0.5 m or more.
  case distanceChanged(Message, DistanceEstimate)
  /// A found beacon attachment's smoothed signal changed (beacon subscriptions only):
  /// reported after found and then whenever the smoothed RSSI moves by 2 dB or more.
  case signalChanged(Message, BeaconSignal)
}

/// A subscription to nearby messages. It stays active while you keep a reference to it,
/// until ``cancel()`` or its TTL runs out; releasing the last reference unsubscribes.
///
/// Keep the subscription referenced while you read ``events``: the stream does not keep
/// it alive, and it finishes when the subscription stops.
public final class Subscription: Sendable {
  /// The subscription's identifier.
  public let id: SubscriptionID
  /// Found, lost and expired events as they happen. One reader; keeps the newest
  /// ``SubscriptionParams/eventBufferSize`` events when not read.
  public let events: AsyncStream<SubscriptionEvent>
  /// Status changes: `.starting`, `.active` (or `.paused`, back and forth), then `.inactive`
  /// (the stream then finishes).
  public var statusUpdates: AsyncStream<HandleStatus> { cell.updates }
  /// The current status.
  public var status: HandleStatus { cell.status }

  private let manager: MessageManager
  private let cell: StatusCell

  init(
    id: SubscriptionID, events: AsyncStream<SubscriptionEvent>, manager: MessageManager,
    cell: StatusCell
  ) {
    self.id = id
    self.events = events
    self.manager = manager
    self.cell = cell
  }

  /// Unsubscribes; the events stream finishes. Calling it again does nothing.
  public func cancel() async {
    await manager.unsubscribe(id)
  }

  deinit {
    let manager = manager
    let id = id
    if cell.status != .inactive {
      Task { await manager.unsubscribe(id) }
    }
  }
}
