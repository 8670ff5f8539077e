import Core

/// Wakes the event streams of this instance when events for their device were written: here
/// (the handler and the sweeper call ``wake(_:)``), or by another instance sharing the
/// database (the storage's notifications, see `ResolverServer`). Streams also look on their
/// own every ``ResolverServerConfiguration/eventPollInterval``, as a safety net.
actor EventHub {
  private var listeners: [DeviceID: [Int: AsyncStream<Void>.Continuation]] = [:]
  private var nextID = 0
  /// Streams woken by every device's events (the web console's live view), by id, with the
  /// project and session they belong to.
  private var watchers: [Int: (owner: WatcherOwner, continuation: AsyncStream<Void>.Continuation)] =
    [:]

  /// Whose live view a watcher is: the caps are per project and per console session.
  struct WatcherOwner: Sendable, Hashable {
    var project: String
    var session: String
  }

  /// The most watchers at once, all projects together: past it a new one is refused.
  static let maximumWatchers = 1024

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
    if any { for watcher in watchers.values { watcher.continuation.yield() } }
  }

  /// Wakes every stream (notifications may have been missed).
  func wakeAll() {
    for streams in listeners.values {
      for continuation in streams.values { continuation.yield() }
    }
    for watcher in watchers.values { watcher.continuation.yield() }
  }

  /// A stream that yields whenever any device may have new events (newest wake-up only), for
  /// `owner`'s live view; nil (refused) when the owner's project holds `perProject` watchers,
  /// its session `perSession`, or the hub ``maximumWatchers``. Nobody's watcher is closed to
  /// make room: one tenant cannot end another's view.
  func watch(owner: WatcherOwner, perProject: Int, perSession: Int) -> (
    id: Int, wakeups: AsyncStream<Void>
  )? {
    guard watchers.count < Self.maximumWatchers else { return nil }
    var (project, session) = (0, 0)
    for watcher in watchers.values where watcher.owner.project == owner.project {
      project += 1
      if watcher.owner.session == owner.session { session += 1 }
    }
    guard project < perProject, session < perSession else { return nil }
    let (stream, continuation) = AsyncStream.makeStream(
      of: Void.self, bufferingPolicy: .bufferingNewest(1))
    nextID += 1
    watchers[nextID] = (owner, continuation)
    return (nextID, stream)
  }

  /// Wakes one watcher (its own poll ticker).
  func nudge(watcher id: Int) { watchers[id]?.continuation.yield() }

  func stopWatching(id: Int) { watchers.removeValue(forKey: id)?.continuation.finish() }

  /// How many streams are open (for metrics).
  var openStreams: Int { listeners.values.reduce(0) { $0 + $1.count } }
}
