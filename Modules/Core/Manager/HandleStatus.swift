import Synchronization

/// Where a publication or subscription is in its life.
public enum HandleStatus: String, Sendable, Hashable, Codable {
  /// Not running: cancelled, released or expired.
  case inactive
  /// Sent to the resolver; the mediums are being set up.
  case starting
  /// Running: the resolver has it and the mediums follow its directives.
  case active
  /// Kept, but not discovering: Nearby permission is not granted, or the app is in
  /// background and the strategy does not allow background work. It becomes `.active` again
  /// when that ends (see ``MessageManager/setAppState(_:)``).
  case paused
}

/// The status of one handle, shared by the handle and the manager (which does not keep the
/// handle alive). A `Mutex` guards the value, its recent history and the readers' continuations.
///
/// Every call to ``updates()`` makes a stream of its own: it starts with the newest
/// ``historyLimit`` statuses so far, then gets every change; `.inactive` finishes them all.
final class StatusCell: Sendable {
  /// How many past statuses a new reader gets (and a slow reader keeps).
  static let historyLimit = 8

  private struct State {
    var status: HandleStatus
    var history: [HandleStatus]
    var readers: [UInt64: AsyncStream<HandleStatus>.Continuation] = [:]
    var nextReader: UInt64 = 0
  }
  private let state: Mutex<State>

  init() {
    state = Mutex(State(status: .starting, history: [.starting]))
  }

  var status: HandleStatus { state.withLock { $0.status } }

  /// A new stream of this handle's statuses, for one reader.
  func updates() -> AsyncStream<HandleStatus> {
    let (stream, continuation) = AsyncStream.makeStream(
      of: HandleStatus.self, bufferingPolicy: .bufferingNewest(Self.historyLimit))
    let reader: UInt64? = state.withLock { state in
      for status in state.history { continuation.yield(status) }
      guard state.status != .inactive else { return nil }
      let reader = state.nextReader
      state.nextReader += 1
      state.readers[reader] = continuation
      return reader
    }
    guard let reader else {
      continuation.finish()
      return stream
    }
    continuation.onTermination = { [weak self] _ in
      _ = self?.state.withLock { $0.readers.removeValue(forKey: reader) }
    }
    return stream
  }

  /// Sets the status; `.inactive` is final and finishes every reader's stream.
  func set(_ status: HandleStatus) {
    let finished: [AsyncStream<HandleStatus>.Continuation] = state.withLock { state in
      guard state.status != status, state.status != .inactive else { return [] }
      state.status = status
      state.history.append(status)
      if state.history.count > Self.historyLimit { state.history.removeFirst() }
      for continuation in state.readers.values { continuation.yield(status) }
      guard status == .inactive else { return [] }
      defer { state.readers.removeAll() }
      return Array(state.readers.values)
    }
    // Outside the lock: finishing runs onTermination, which takes it.
    for continuation in finished { continuation.finish() }
  }
}
