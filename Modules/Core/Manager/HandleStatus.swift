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
/// handle alive). A `Mutex` guards the value and the stream's continuation.
final class StatusCell: Sendable {
  private struct State {
    var status: HandleStatus
    var continuation: AsyncStream<HandleStatus>.Continuation?
  }
  private let state: Mutex<State>
  let updates: AsyncStream<HandleStatus>

  init() {
    let (stream, continuation) = AsyncStream.makeStream(
      of: HandleStatus.self, bufferingPolicy: .bufferingNewest(8))
    continuation.yield(.starting)
    updates = stream
    state = Mutex(State(status: .starting, continuation: continuation))
  }

  var status: HandleStatus { state.withLock { $0.status } }

  /// Sets the status; `.inactive` is final and finishes the stream.
  func set(_ status: HandleStatus) {
    state.withLock { state in
      guard state.status != status, state.continuation != nil else { return }
      state.status = status
      state.continuation?.yield(status)
      if status == .inactive {
        state.continuation?.finish()
        state.continuation = nil
      }
    }
  }
}
