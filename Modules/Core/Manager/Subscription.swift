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

/// A subscription to nearby messages. It stays active until ``cancel()``, until its TTL runs
/// out, or until the last reference to it goes away; ``events`` is such a reference, so
/// reading the events keeps the subscription running.
///
/// Prefer the scoped form, ``MessageManager/withSubscription(onFound:onLost:configure:_:)``,
/// which unsubscribes when its closure returns or throws. A handle released without
/// ``cancel()`` is still unsubscribed, but only eventually: `deinit` queues the release on the
/// manager, whose own task works through it, and nothing waits for that.
public final class Subscription: Sendable {
  /// The subscription's identifier.
  public let id: SubscriptionID
  /// Found, lost and expired events as they happen; the sequence finishes when the
  /// subscription stops (cancelled, released or expired).
  ///
  /// The sequence and its iterator keep this subscription alive, so
  /// `for await event in try await manager.subscribe().events { … }` runs until you leave
  /// the loop. There is one stream of events per subscription: read it from one place
  /// (two readers would share its elements). It keeps the newest
  /// ``SubscriptionParams/eventBufferSize`` events when not read.
  public var events: Events { Events(subscription: self) }
  /// Status changes: `.starting`, `.active` (or `.paused`, back and forth), then `.inactive`
  /// (the stream then finishes).
  ///
  /// Each access makes a new stream for one reader, which starts with the newest 8 statuses
  /// so far and then gets every change; two readers each see every status. Each stream
  /// keeps the newest 8 when not read. It does not keep the subscription alive.
  public var statusUpdates: AsyncStream<HandleStatus> { cell.updates() }
  /// The current status.
  public var status: HandleStatus { cell.status }

  private let stream: AsyncStream<SubscriptionEvent>
  private let manager: MessageManager
  private let cell: StatusCell

  init(
    id: SubscriptionID, events: AsyncStream<SubscriptionEvent>, manager: MessageManager,
    cell: StatusCell
  ) {
    self.id = id
    self.stream = events
    self.manager = manager
    self.cell = cell
  }

  /// Unsubscribes; the events stream finishes. Returns when the resolver has been told (a
  /// resolver that cannot be told is logged, not thrown). Calling it again does nothing.
  /// Runs on the manager's actor.
  public func cancel() async {
    await manager.unsubscribe(id)
  }

  deinit {
    let manager = manager
    let id = id
    if cell.status != .inactive {
      manager.inputs.release(.subscription(id))
    }
  }

  /// A subscription's events (``Subscription/events``): an `AsyncSequence` that keeps its
  /// subscription alive while the sequence or an iterator of it exists.
  public struct Events: AsyncSequence, Sendable {
    public typealias Element = SubscriptionEvent
    public typealias Failure = Never

    /// The subscription these events belong to.
    public let subscription: Subscription

    /// Makes the one iterator of the subscription's event stream.
    public func makeAsyncIterator() -> Iterator {
      Iterator(subscription: subscription, base: subscription.stream.makeAsyncIterator())
    }

    /// Reads the subscription's events, keeping it alive.
    public struct Iterator: AsyncIteratorProtocol {
      public typealias Element = SubscriptionEvent
      public typealias Failure = Never

      /// Held so that the subscription lives as long as its reader.
      let subscription: Subscription
      var base: AsyncStream<SubscriptionEvent>.Iterator

      /// The next event; `nil` once the subscription has stopped. Runs on the caller's
      /// actor.
      public mutating func next(
        isolation actor: isolated (any Actor)? = #isolation
      ) async -> SubscriptionEvent? {
        await base.next(isolation: actor)
      }

      /// The next event; `nil` once the subscription has stopped.
      public mutating func next() async -> SubscriptionEvent? {
        await base.next(isolation: nil)
      }
    }
  }
}
