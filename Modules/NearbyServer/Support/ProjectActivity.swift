import Synchronization

/// Reports handled and events streamed by this instance, per project: what the console's
/// overview shows a project's admin (server-wide figures are `/metrics`', for operators).
/// Projects exist only through API keys the operator made, so the table is as bounded as
/// they are. Called synchronously from any task; the counts are behind a `Mutex`.
final class ProjectActivity: Sendable {
  struct Counts: Sendable, Hashable {
    var reports = 0
    var eventsStreamed = 0
  }

  private let counts = Mutex<[String: Counts]>([:])

  func reported(project: String) { counts.withLock { $0[project, default: Counts()].reports += 1 } }

  func streamed(project: String) {
    counts.withLock { $0[project, default: Counts()].eventsStreamed += 1 }
  }

  /// The project's counts since this instance started.
  func counts(of project: String) -> Counts { counts.withLock { $0[project] ?? Counts() } }
}
