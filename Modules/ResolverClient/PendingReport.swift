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

  /// `report` with what is pending added, up to the limits of one report
  /// (``Core/Report/maximumSightings``, ``Core/Report/maximumHandleChanges``), oldest first;
  /// what was added is no longer pending (keep it again if the send fails), the rest waits
  /// for the next report.
  mutating func merged(into report: Report) -> Report {
    var report = report
    let room = max(Report.maximumSightings - report.sightings.count, 0)
    let taken = Array(sightings.prefix(room))
    sightings.removeFirst(taken.count)
    report.sightings = taken + report.sightings
    func merge<ID: Equatable>(_ pending: inout [ID], into list: inout [ID]) {
      let new = pending.filter { !list.contains($0) }
      let count = min(max(Report.maximumHandleChanges - list.count, 0), new.count)
      list += new.prefix(count)
      pending = Array(new.dropFirst(count))
    }
    merge(&unpublish, into: &report.unpublish)
    merge(&unsubscribe, into: &report.unsubscribe)
    return report
  }

  mutating func takeDroppedCount() -> Int {
    defer { dropped = 0 }
    return dropped
  }
}
