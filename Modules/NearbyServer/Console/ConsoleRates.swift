/// Reports and events a second of a project: each overview compares the project's counts
/// (``ProjectActivity``) with the previous overview's reading of the same project.
actor ConsoleRates {
  struct Reading: Sendable {
    var reports: Double
    var events: Double
    var at: ContinuousClock.Instant
  }

  /// The rates since the previous reading (nil for the first), and the seconds between.
  struct Rates: Sendable {
    var reportsPerSecond: Double?
    var eventsPerSecond: Double?
    var seconds: Double?
  }

  private var previous: [String: Reading] = [:]

  /// Records the project's `reading` and compares it with its previous one.
  func rates(project: String, now reading: Reading) -> Rates {
    defer { previous[project] = reading }
    guard let previous = previous[project] else { return Rates() }
    let seconds = previous.at.duration(to: reading.at).seconds
    guard seconds > 0.5 else { return Rates(seconds: seconds) }
    return Rates(
      reportsPerSecond: max(0, reading.reports - previous.reports) / seconds,
      eventsPerSecond: max(0, reading.events - previous.events) / seconds, seconds: seconds)
  }
}
