/// Puts the resolver's events back in the order it numbered them: they reach a manager on
/// two channels (report answers and the event stream), so one may arrive before those
/// numbered earlier.
///
/// An event numbered next is released at once, with the held ones that follow it without a
/// gap; one numbered later is held; one already released (or skipped) is ignored. At most
/// ``holdLimit`` events are held: past that, the sequencer stops waiting for the missing
/// numbers and releases from the lowest held one on (a resolver that skipped numbers must
/// not make the manager hold events forever).
///
/// A value owned by the manager's actor; it decides, the manager dispatches.
struct EventSequencer {
  /// The most events held while an earlier one is missing.
  static let holdLimit = 4096

  /// The number of the next event to release.
  private(set) var next: UInt64 = 1
  private var held: [UInt64: ResolverEvent] = [:]

  /// How many events wait for an earlier one.
  var heldCount: Int { held.count }

  /// Takes `events` as they arrived; returns those to deliver now, in order, and how many
  /// numbers were given up on to stay within ``holdLimit``.
  mutating func receive(_ events: [SequencedEvent]) -> (release: [ResolverEvent], skipped: UInt64) {
    var release: [ResolverEvent] = []
    var skipped: UInt64 = 0
    for item in events where item.sequence >= next {
      if item.sequence == next, held.isEmpty {
        release.append(item.event)
        next += 1
        continue
      }
      held[item.sequence] = item.event
      if held.count > Self.holdLimit, let lowest = held.keys.min() {
        skipped += lowest - next
        next = lowest
      }
      while let event = held.removeValue(forKey: next) {
        release.append(event)
        next += 1
      }
    }
    return (release, skipped)
  }
}
