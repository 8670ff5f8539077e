import Foundation
import HTTPTypes
import Hummingbird
import ServerStorage

/// The overview page: the project's devices seen lately, its reports, events and event streams
/// on this instance (``ProjectActivity``, ``EventStreamCounts``), and whether the database
/// answers (``HealthState``). Server-wide figures are `/metrics`', for the operator.
extension Console {
  func registerOverview(on router: Router<AddressedRequestContext>) {
    router.get("console") { request, context in
      await signedIn(request, context) { session in try await overview(session) }
    }
  }

  func overview(_ session: ConsoleSession) async throws -> Response {
    let (project, now) = (session.project, now)
    let (minute, hour) = try await handler.read { store in
      (
        try store.projects.devicesSeen(project: project, since: now.addingTimeInterval(-60)),
        try store.projects.devicesSeen(project: project, since: now.addingTimeInterval(-3600))
      )
    }
    // The project's own figures: another project's activity is not this admin's to see.
    let counts = handler.activity.counts(of: project)
    let (reports, events) = (Double(counts.reports), Double(counts.eventsStreamed))
    let figures = await rates.rates(
      project: project, now: .init(reports: reports, events: events, at: .now))
    let problem = handler.health.problem
    let database = storage.description.hasPrefix("sqlite") ? "SQLite" : "PostgreSQL"
    var values: [String: Any] = [
      "devicesMinute": minute, "devicesHour": hour,
      "reportsPerSecond": Self.rate(figures.reportsPerSecond), "reportsTotal": Int(reports),
      "eventsPerSecond": Self.rate(figures.eventsPerSecond), "eventsTotal": Int(events),
      "openStreams": handler.streams.open(project: project),
      "database": problem == nil ? "healthy" : "unhealthy",
      "databaseDetail": problem ?? database,
    ]
    if let seconds = figures.seconds { values["since"] = String(Int(seconds.rounded())) }
    return page(.overview, title: "Overview", values: values, session: session)
  }

  static func rate(_ value: Double?) -> String {
    guard let value else { return "–" }
    return String(format: "%.1f", value)
  }
}
