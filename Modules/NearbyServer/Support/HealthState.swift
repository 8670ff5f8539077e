import Foundation
import Synchronization

/// Whether the database answered lately: the sweeper touches it several times a second, so
/// `/healthz` reads this instead of querying (it stays trivial under load).
final class HealthState: Sendable {
  private struct State {
    var lastSuccess: ContinuousClock.Instant?
    var lastError: String?
  }
  private let state = Mutex(State())
  /// How long without a successful database call before the server reports itself unhealthy.
  let tolerance: Duration

  init(tolerance: Duration) { self.tolerance = tolerance }

  func recordSuccess() {
    state.withLock {
      $0.lastSuccess = .now
      $0.lastError = nil
    }
  }

  func recordFailure(_ error: any Error) {
    state.withLock { $0.lastError = "\(error)" }
  }

  /// nil when healthy; otherwise why not.
  var problem: String? {
    state.withLock { state in
      guard let success = state.lastSuccess, success.duration(to: .now) < tolerance else {
        return
          "the database has not answered for \(tolerance): \(state.lastError ?? "no answer yet")"
      }
      return nil
    }
  }
}
