/// Reports and events a second, from the counters `/metrics` exposes: each overview compares
/// them with the previous overview's reading.
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

  private var previous: Reading?

  /// Records `reading` and compares it with the previous one.
  func rates(now reading: Reading) -> Rates {
    defer { previous = reading }
    guard let previous else { return Rates() }
    let seconds = previous.at.duration(to: reading.at).seconds
    guard seconds > 0.5 else { return Rates(seconds: seconds) }
    return Rates(
      reportsPerSecond: max(0, reading.reports - previous.reports) / seconds,
      eventsPerSecond: max(0, reading.events - previous.events) / seconds, seconds: seconds)
  }

  /// The sum of the samples of the metric `name` in a Prometheus text exposition.
  static func value(of name: String, in exposition: String) -> Double {
    var total = 0.0
    for line in exposition.split(separator: "\n") where line.hasPrefix(name) {
      let rest = line.dropFirst(name.count)
      guard let first = rest.first, first == " " || first == "{" else { continue }
      if let value = rest.split(separator: " ").last.flatMap({ Double($0) }) { total += value }
    }
    return total
  }
}
