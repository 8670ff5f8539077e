@_spi(Resolver) import Core
import DequeModule

/// What a client could not deliver while the server was unreachable: sightings (bounded,
/// oldest dropped and counted) and unpublish/unsubscribe requests. It rides along with the
/// next report, or is sent on its own once the server answers again.
struct PendingReport: Sendable {
  let capacity: Int
  private(set) var sightings = Deque<Sighting>()
  private(set) var unpublish: [PublicationID] = []
  private(set) var unsubscribe: [SubscriptionID] = []
  /// Sightings dropped since the last ``takeDroppedCount()``.
  private(set) var dropped = 0

  init(capacity: Int) { self.capacity = max(capacity, 1) }

  var isEmpty: Bool { sightings.isEmpty && unpublish.isEmpty && unsubscribe.isEmpty }

  /// Keeps the parts of a report that failed to send and can be sent later.
  mutating func keep(_ report: Report) {
    for sighting in report.sightings {
      if sightings.count == capacity {
        sightings.removeFirst()
        dropped += 1
      }
      sightings.append(sighting)
    }
    unpublish += report.unpublish.filter { !unpublish.contains($0) }
    unsubscribe += report.unsubscribe.filter { !unsubscribe.contains($0) }
  }

  /// `report` with everything pending added; the pending parts are cleared (keep them again
  /// if the send fails).
  mutating func merged(into report: Report) -> Report {
    var report = report
    report.sightings = Array(sightings) + report.sightings
    report.unpublish += unpublish.filter { !report.unpublish.contains($0) }
    report.unsubscribe += unsubscribe.filter { !report.unsubscribe.contains($0) }
    sightings.removeAll()
    unpublish.removeAll()
    unsubscribe.removeAll()
    return report
  }

  mutating func takeDroppedCount() -> Int {
    defer { dropped = 0 }
    return dropped
  }
}
