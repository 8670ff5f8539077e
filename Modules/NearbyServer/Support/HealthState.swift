import Foundation
import Synchronization

/// Whether the database answered lately: the sweeper touches it several times a second, so
/// `/healthz` reads this instead of querying (it stays trivial under load). What went wrong
/// is for the server's log (the sweeper logs it), never for `/healthz`'s anonymous callers:
/// a database error names hosts, users, tables.
final class HealthState: Sendable {
  private struct State {
    var lastSuccess: ContinuousClock.Instant?
    var failing = false
  }
  private let state = Mutex(State())
  /// How long without a successful database call before the server reports itself unhealthy.
  let tolerance: Duration

  init(tolerance: Duration) { self.tolerance = tolerance }

  func recordSuccess() {
    state.withLock {
      $0.lastSuccess = .now
      $0.failing = false
    }
  }

  func recordFailure() {
    state.withLock { $0.failing = true }
  }

  /// nil when healthy; otherwise why not.
  var problem: String? {
    state.withLock { state in
      guard let success = state.lastSuccess, success.duration(to: .now) < tolerance else {
        let since = state.failing ? "it fails" : "no answer yet"
        return
          "the database has not answered for \(tolerance) (\(since); the server's log says why)"
      }
      return nil
    }
  }
}
