import Core
import Synchronization

/// Wakes the event streams of this instance when events for their device were written: here
/// (the handler and the sweeper call ``wake(_:)``), or by another instance sharing the
/// database (the storage's notifications, see `ResolverServer`). Each stream is also woken
/// every poll interval of its own (from when it opened), as a safety net and for its
/// keep-alives: by ``run(resolution:)``, one loop for all the streams, which the server runs in
/// its task group.
///
/// Its methods are synchronous (a mutex guards the state): a stream that ends stops listening
/// from its `deinit` or `defer`, with no task to hop onto an actor.
final class EventHub: Sendable {
  private struct State {
    var listeners: [DeviceID: [Int: Listener]] = [:]
    var nextID = 0
    /// Streams woken by every device's events (the web console's live view), by id, with the
    /// project and session they belong to.
    var watchers: [Int: Watcher] = [:]
  }
  private let state = Mutex(State())

  /// A device event stream: the API key it was opened with, its wake-ups and its poll.
  private struct Listener {
    var key: String
    var continuation: AsyncStream<Void>.Continuation
    var poll: Poll
  }

  /// A live view: whose it is, its wake-ups and its poll.
  private struct Watcher {
    var owner: WatcherOwner
    var continuation: AsyncStream<Void>.Continuation
    var poll: Poll
  }

  /// When a stream is next woken by its poll, and how often.
  private struct Poll {
    var due: ContinuousClock.Instant
    let interval: Duration

    init(every interval: Duration, from now: ContinuousClock.Instant) {
      self.interval = interval
      due = now + interval
    }

    /// Whether the poll is due at `now`; if so, its next time is set: one interval on, or one
    /// interval after `now` when the loop fell a whole interval behind (so a late loop does
    /// not wake it in a burst).
    mutating func fire(at now: ContinuousClock.Instant) -> Bool {
      guard due <= now else { return false }
      due += interval
      if due <= now { due = now + interval }
      return true
    }
  }

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

  /// A stream that yields when the device may have new events (newest wake-up only), and at
  /// least every `pollInterval` (while ``run(resolution:)`` runs), for a stream opened with the
  /// API key `key` (its id); it finishes when the device opens too many (see
  /// ``streamsPerDevice``), or when the key is revoked (``end(keys:)``).
  func listen(
    to device: DeviceID, key: String, pollInterval: Duration,
    at now: ContinuousClock.Instant = .now
  ) -> (id: Int, wakeups: AsyncStream<Void>) {
    let (stream, continuation) = AsyncStream.makeStream(
      of: Void.self, bufferingPolicy: .bufferingNewest(1))
    let poll = Poll(every: pollInterval, from: now)
    return state.withLock { state in
      state.nextID += 1
      var streams = state.listeners[device, default: [:]]
      while streams.count >= Self.streamsPerDevice, let oldest = streams.keys.min() {
        streams.removeValue(forKey: oldest)?.continuation.finish()
      }
      streams[state.nextID] = Listener(key: key, continuation: continuation, poll: poll)
      state.listeners[device] = streams
      return (state.nextID, stream)
    }
  }

  func stopListening(to device: DeviceID, id: Int) {
    state.withLock { state in
      state.listeners[device]?.removeValue(forKey: id)?.continuation.finish()
      if state.listeners[device]?.isEmpty == true { state.listeners[device] = nil }
    }
  }

  /// Wakes every stream of these devices, and every watcher.
  func wake<Devices: Sequence<DeviceID>>(_ devices: Devices) {
    state.withLock { state in
      var any = false
      for device in devices {
        any = true
        for listener in state.listeners[device, default: [:]].values {
          listener.continuation.yield()
        }
      }
      if any { for watcher in state.watchers.values { watcher.continuation.yield() } }
    }
  }

  /// Wakes every stream (notifications may have been missed).
  func wakeAll() {
    state.withLock { state in
      for streams in state.listeners.values {
        for listener in streams.values { listener.continuation.yield() }
      }
      for watcher in state.watchers.values { watcher.continuation.yield() }
    }
  }

  /// The API keys (ids) the open streams were opened with.
  var keys: Set<String> {
    state.withLock { state in
      Set(state.listeners.values.lazy.flatMap { $0.values.lazy.map(\.key) })
    }
  }

  /// Ends the streams opened with these keys (ids): the keys were revoked.
  func end(keys: Set<String>) {
    guard !keys.isEmpty else { return }
    state.withLock { state in
      for (device, streams) in state.listeners {
        let ended = streams.filter { keys.contains($0.value.key) }
        guard !ended.isEmpty else { continue }
        for listener in ended.values { listener.continuation.finish() }
        let left = streams.filter { !keys.contains($0.value.key) }
        state.listeners[device] = left.isEmpty ? nil : left
      }
    }
  }

  /// A stream that yields whenever any device may have new events (newest wake-up only), and
  /// at least every `pollInterval` (while ``run(resolution:)`` runs), for `owner`'s live view;
  /// nil (refused) when the owner's project holds `perProject` watchers, its session
  /// `perSession`, or the hub ``maximumWatchers``. Nobody's watcher is closed to make room: one
  /// tenant cannot end another's view.
  func watch(
    owner: WatcherOwner, perProject: Int, perSession: Int, pollInterval: Duration,
    at now: ContinuousClock.Instant = .now
  ) -> (id: Int, wakeups: AsyncStream<Void>)? {
    let poll = Poll(every: pollInterval, from: now)
    return state.withLock { state in
      guard state.watchers.count < Self.maximumWatchers else { return nil }
      var (project, session) = (0, 0)
      for watcher in state.watchers.values where watcher.owner.project == owner.project {
        project += 1
        if watcher.owner.session == owner.session { session += 1 }
      }
      guard project < perProject, session < perSession else { return nil }
      let (stream, continuation) = AsyncStream.makeStream(
        of: Void.self, bufferingPolicy: .bufferingNewest(1))
      state.nextID += 1
      state.watchers[state.nextID] = Watcher(owner: owner, continuation: continuation, poll: poll)
      return (state.nextID, stream)
    }
  }

  /// Wakes every stream and watcher whose poll is due at `now`, and says which (their ids).
  /// Walks the state in place (by index, not by a copy of its keys), so a tick over many
  /// streams copies nothing.
  @discardableResult
  func wakeDue(at now: ContinuousClock.Instant) -> Set<Int> {
    state.withLock { state in
      var woken: Set<Int> = []
      var device = state.listeners.values.startIndex
      while device != state.listeners.values.endIndex {
        var stream = state.listeners.values[device].startIndex
        while stream != state.listeners.values[device].endIndex {
          if state.listeners.values[device].values[stream].poll.fire(at: now) {
            state.listeners.values[device].values[stream].continuation.yield()
            woken.insert(state.listeners.values[device].keys[stream])
          }
          state.listeners.values[device].formIndex(after: &stream)
        }
        state.listeners.values.formIndex(after: &device)
      }
      var watcher = state.watchers.startIndex
      while watcher != state.watchers.endIndex {
        if state.watchers.values[watcher].poll.fire(at: now) {
          state.watchers.values[watcher].continuation.yield()
          woken.insert(state.watchers.keys[watcher])
        }
        state.watchers.formIndex(after: &watcher)
      }
      return woken
    }
  }

  /// Wakes the streams and watchers as their polls fall due, looking every `resolution` (a
  /// stream is woken at most that late), until the task is cancelled.
  func run(resolution: Duration) async {
    while (try? await Task.sleep(for: resolution)) != nil {
      wakeDue(at: .now)
    }
  }

  func stopWatching(id: Int) {
    state.withLock { state in state.watchers.removeValue(forKey: id)?.continuation.finish() }
  }

  /// How many streams are open (for metrics).
  var openStreams: Int { state.withLock { $0.listeners.values.reduce(0) { $0 + $1.count } } }
}
