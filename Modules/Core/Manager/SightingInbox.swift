import DequeModule
import Synchronization

/// Sightings waiting to be reported. Medium tasks append without hopping onto the manager's
/// actor; only the append that finds the inbox idle asks for a flush, so a burst of sightings
/// costs one actor hop per report instead of one per sighting. Bounded: when the resolver
/// cannot keep up, the oldest sightings are dropped and counted. A mutex guards the buffer.
final class SightingInbox: Sendable {
  private struct State {
    var pending = Deque<Sighting>()
    var flushScheduled = false
    var dropped = 0
  }
  private let state = Mutex(State())
  /// The most sightings kept waiting.
  let capacity: Int

  init(capacity: Int = 65_536) { self.capacity = capacity }

  /// Adds a sighting; returns true when the caller must start a flush.
  func append(_ sighting: Sighting) -> Bool {
    state.withLock { state in
      if state.pending.count >= capacity {
        state.pending.removeFirst()
        state.dropped += 1
      }
      state.pending.append(sighting)
      guard !state.flushScheduled else { return false }
      state.flushScheduled = true
      return true
    }
  }

  /// Takes up to `limit` sightings and how many were dropped since the last take. An empty
  /// batch ends the flush: the next append schedules a new one.
  func take(upTo limit: Int) -> (batch: [Sighting], dropped: Int) {
    state.withLock { state in
      let dropped = state.dropped
      state.dropped = 0
      guard !state.pending.isEmpty else {
        state.flushScheduled = false
        return ([], dropped)
      }
      let count = min(limit, state.pending.count)
      let batch = Array(state.pending.prefix(count))
      state.pending.removeFirst(count)
      return (batch, dropped)
    }
  }
}
