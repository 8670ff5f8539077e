import Core

/// Wakes the event streams of this instance when events for their device were written: here
/// (the handler and the sweeper call ``wake(_:)``), or by another instance sharing the
/// database (the storage's notifications, see `ResolverServer`). Streams also look on their
/// own every ``ResolverServerConfiguration/eventPollInterval``, as a safety net.
actor EventHub {
  private var listeners: [DeviceID: [Int: AsyncStream<Void>.Continuation]] = [:]
  private var nextID = 0
  /// Streams woken by every device's events (the web console's live view), by id.
  private var watchers: [Int: AsyncStream<Void>.Continuation] = [:]

  /// The most watchers at once; a new one past this closes the oldest.
  static let maximumWatchers = 64

  /// The most event streams one device has open on this instance: a device needs one (two
  /// while it reconnects); a new one past this closes the oldest, so a device (or whoever
  /// holds its secret) cannot pile up streams.
  static let streamsPerDevice = 2

  /// A stream that yields when the device may have new events (newest wake-up only); it
  /// finishes when the device opens too many (see ``streamsPerDevice``).
  func listen(to device: DeviceID) -> (id: Int, wakeups: AsyncStream<Void>) {
    let (stream, continuation) = AsyncStream.makeStream(
      of: Void.self, bufferingPolicy: .bufferingNewest(1))
    nextID += 1
    var streams = listeners[device, default: [:]]
    while streams.count >= Self.streamsPerDevice, let oldest = streams.keys.min() {
      streams.removeValue(forKey: oldest)?.finish()
    }
    streams[nextID] = continuation
    listeners[device] = streams
    return (nextID, stream)
  }

  func stopListening(to device: DeviceID, id: Int) {
    listeners[device]?.removeValue(forKey: id)?.finish()
    if listeners[device]?.isEmpty == true { listeners[device] = nil }
  }

  /// Wakes every stream of these devices, and every watcher.
  func wake<Devices: Sequence<DeviceID>>(_ devices: Devices) {
    var any = false
    for device in devices {
      any = true
      for continuation in listeners[device, default: [:]].values { continuation.yield() }
    }
    if any { for continuation in watchers.values { continuation.yield() } }
  }

  /// Wakes every stream (notifications may have been missed).
  func wakeAll() {
    for streams in listeners.values {
      for continuation in streams.values { continuation.yield() }
    }
    for continuation in watchers.values { continuation.yield() }
  }

  /// A stream that yields whenever any device may have new events (newest wake-up only); it
  /// finishes when ``maximumWatchers`` newer ones open.
  func watch() -> (id: Int, wakeups: AsyncStream<Void>) {
    let (stream, continuation) = AsyncStream.makeStream(
      of: Void.self, bufferingPolicy: .bufferingNewest(1))
    nextID += 1
    while watchers.count >= Self.maximumWatchers, let oldest = watchers.keys.min() {
      watchers.removeValue(forKey: oldest)?.finish()
    }
    watchers[nextID] = continuation
    return (nextID, stream)
  }

  /// Wakes one watcher (its own poll ticker).
  func nudge(watcher id: Int) { watchers[id]?.yield() }

  func stopWatching(id: Int) { watchers.removeValue(forKey: id)?.finish() }

  /// How many streams are open (for metrics).
  var openStreams: Int { listeners.values.reduce(0) { $0 + $1.count } }
}
