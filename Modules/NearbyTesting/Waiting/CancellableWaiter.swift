import Synchronization

/// The continuation `untilCancelled()` parks, and whether the task was cancelled first.
final class CancellableWaiter: Sendable {
  private struct State {
    var continuation: CheckedContinuation<Void, any Error>?
    var cancelled = false
  }
  private let state = Mutex(State())

  /// Keeps `continuation` until ``cancel()``; resumes it at once if that came first.
  func park(_ continuation: CheckedContinuation<Void, any Error>) {
    let cancelled = state.withLock { state in
      if !state.cancelled { state.continuation = continuation }
      return state.cancelled
    }
    if cancelled { continuation.resume(throwing: CancellationError()) }
  }

  /// Resumes the parked continuation with `CancellationError`, or marks that the next one is.
  func cancel() {
    let continuation = state.withLock { state in
      state.cancelled = true
      defer { state.continuation = nil }
      return state.continuation
    }
    continuation?.resume(throwing: CancellationError())
  }
}
