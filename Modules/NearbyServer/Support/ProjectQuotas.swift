/// How much one project may hold. A flood of registrations or publications from one project's
/// key (every installed app carries it) fills the database for everyone otherwise.
public struct ProjectQuotas: Sendable, Hashable {
  /// The most devices registered in a project (checked at each registration). Default 100 000.
  public var maximumDevices = 100_000
  /// The most bytes of live messages and beacon attachments a project stores (checked once a
  /// minute: past it, publishing and attaching are refused until it is under again).
  /// Default 1 GiB.
  public var maximumStoredBytes = 1 << 30

  public init() {}
}

/// The projects found over their stored-bytes quota at the last check (the sweeper's, once a
/// minute), for the handlers to refuse what would add more.
actor QuotaState {
  private var overStoredBytes: [String: Int] = [:]

  /// Replaces the list with what a check found: each project over, with the bytes it holds.
  func update(overStoredBytes projects: [String: Int]) { overStoredBytes = projects }

  /// The bytes `project` held at the last check, if that was over its quota.
  func storedBytesOverQuota(project: String) -> Int? { overStoredBytes[project] }
}
