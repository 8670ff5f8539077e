import Synchronization

/// When each numbered signal was emitted and received; the emitting task and the reading task
/// both write, so a mutex guards the arrays.
final class SendTimes: Sendable {
  private struct State {
    var sent: [ContinuousClock.Instant?]
    var received: [ContinuousClock.Instant?]
    var receivedCount = 0
  }
  private let state: Mutex<State>

  init(count: Int) {
    state = Mutex(
      State(
        sent: Array(repeating: nil, count: count), received: Array(repeating: nil, count: count))
    )
  }

  func sent(_ index: Int, at instant: ContinuousClock.Instant) {
    state.withLock { $0.sent[index] = instant }
  }

  func received(_ index: Int, at instant: ContinuousClock.Instant) {
    state.withLock { state in
      guard state.received.indices.contains(index), state.received[index] == nil else { return }
      state.received[index] = instant
      state.receivedCount += 1
    }
  }

  var receivedCount: Int { state.withLock { $0.receivedCount } }

  /// Latency of each signal in µs (by index) and the last arrival among the first `burst`.
  func results(burst: Int) -> (latencies: [Double], lastBurstArrival: ContinuousClock.Instant) {
    state.withLock { state in
      var latencies: [Double] = []
      for (sent, received) in zip(state.sent, state.received) {
        guard let sent, let received else {
          latencies.append(.infinity)
          continue
        }
        latencies.append(Double((received - sent) / .nanoseconds(1)) / 1000)
      }
      let last = state.received[..<burst].compactMap { $0 }.max() ?? .now
      return (latencies, last)
    }
  }
}
