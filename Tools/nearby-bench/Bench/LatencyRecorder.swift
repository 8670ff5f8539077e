import Synchronization

/// When each sighting was injected and when its handler ran, by publisher index. Handlers run
/// on the manager's actor; the injecting task writes too, so a mutex guards the arrays.
final class LatencyRecorder: Sendable {
  private struct State {
    var injected: [ContinuousClock.Instant?]
    var handled: [ContinuousClock.Instant?]
    var count = 0
  }
  private let state: Mutex<State>

  init(size: Int) {
    state = Mutex(
      State(
        injected: Array(repeating: nil, count: size), handled: Array(repeating: nil, count: size)))
  }

  func reset() {
    state.withLock { state in
      for index in state.injected.indices {
        state.injected[index] = nil
        state.handled[index] = nil
      }
      state.count = 0
    }
  }

  func injected(_ index: Int, at instant: ContinuousClock.Instant = .now) {
    state.withLock { $0.injected[index] = instant }
  }

  func handled(_ index: Int) {
    let now = ContinuousClock.now
    state.withLock { state in
      if state.handled[index] == nil { state.count += 1 }
      state.handled[index] = now
    }
  }

  var handledCount: Int { state.withLock { $0.count } }

  /// Latencies in microseconds, sorted, and the span from first injection to last handler.
  func results() -> (latencies: [Double], span: Duration) {
    state.withLock { state in
      var latencies: [Double] = []
      var first: ContinuousClock.Instant?
      var last: ContinuousClock.Instant?
      for (injected, handled) in zip(state.injected, state.handled) {
        guard let injected, let handled else { continue }
        latencies.append(Double((handled - injected) / .nanoseconds(1)) / 1000)
        first = min(first ?? injected, injected)
        last = max(last ?? handled, handled)
      }
      let span = (first.flatMap { first in last.map { $0 - first } }) ?? .zero
      return (latencies.sorted(), span)
    }
  }
}
