@_spi(Resolver) import Core

/// A phone's events kept by the box, so that none is lost while the phone has no stream open
/// (between its registration and its first stream, during a reconnect): the last
/// ``capacity`` events, replayed after the `Last-Event-ID` a reconnecting stream gives, and
/// the stream open now, if any. A value: the front's actor holds one per phone.
struct WebMailbox {
  /// Events kept: found and lost of a phone's few subscriptions, far more than a reconnect's
  /// worth.
  static let capacity = 256

  private(set) var events: [SequencedEvent] = []
  private var listener: AsyncStream<SequencedEvent>.Continuation?

  /// Keeps `event` and hands it to the open stream.
  mutating func deliver(_ event: SequencedEvent) {
    events.append(event)
    if events.count > Self.capacity { events.removeFirst(events.count - Self.capacity) }
    listener?.yield(event)
  }

  /// A new stream (the previous one ends): the kept events after `lastEventID` (all of them
  /// without one), then each new event.
  mutating func attach(after lastEventID: UInt64?) -> (
    replay: [SequencedEvent], live: AsyncStream<SequencedEvent>
  ) {
    listener?.finish()
    let (live, continuation) = AsyncStream.makeStream(
      of: SequencedEvent.self, bufferingPolicy: .bufferingOldest(Self.capacity))
    listener = continuation
    let replay = events.filter { event in lastEventID.map { event.sequence > $0 } ?? true }
    return (replay, live)
  }

  /// Ends the open stream (the phone left, the box stops).
  mutating func close() {
    listener?.finish()
    listener = nil
  }
}
