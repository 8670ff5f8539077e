import Synchronization

/// Sightings waiting to be reported. Medium tasks append without hopping onto the manager's
/// actor; only the append that finds the inbox idle asks for a flush, so a burst of sightings
/// costs one actor hop per report instead of one per sighting. A mutex guards the buffer.
final class SightingInbox: Sendable {
  private struct State {
    var pending: [Sighting] = []
    var flushScheduled = false
  }
  private let state = Mutex(State())

  /// Adds a sighting; returns true when the caller must start a flush.
  func append(_ sighting: Sighting) -> Bool {
    state.withLock { state in
      state.pending.append(sighting)
      guard !state.flushScheduled else { return false }
      state.flushScheduled = true
      return true
    }
  }

  /// Takes up to `limit` sightings; when none are left the flush ends (returns an empty batch)
  /// and the next append schedules a new one.
  func take(upTo limit: Int) -> [Sighting] {
    state.withLock { state in
      guard !state.pending.isEmpty else {
        state.flushScheduled = false
        return []
      }
      let count = min(limit, state.pending.count)
      let batch = Array(state.pending.prefix(count))
      state.pending.removeFirst(count)
      return batch
    }
  }
}
