public import Foundation

/// One transaction of a ``ResolverStorage``: its connection and the tables over it, each a type
/// of its own, all sharing what this transaction has read.
///
/// It is made by ``ResolverStorage/transaction(_:)`` (or ``ResolverStorage/read(_:)``) and used
/// only inside that call, on the storage's thread; nothing outlives the transaction, so several
/// server processes can share one PostgreSQL database (see ``PostgresStorage``).
public final class SQLTransaction {
  /// The connection, for the storage's own statements inside the same transaction (the
  /// batcher's savepoints, PostgreSQL's advisory lock) and this package's tests; not API.
  package let sql: any SQLConnection
  /// What the storage remembers about its deadlines between transactions (SQLite), if
  /// anything.
  public let deadlineHint: DeadlineHint?
  /// The resolution engine's state: Resolution's `ResolutionStore` over SQL, one table per kind
  /// of record (``ResolutionTables/devices``, ``ResolutionTables/handles``, …).
  public let resolution: ResolutionTables
  /// The row locks the engine's work takes first on PostgreSQL (nothing on SQLite).
  @_spi(Resolver) public let locks: DeviceLocks
  /// Every event addressed to a device, numbered by the device's sequence.
  public let eventLog: EventLog
  /// Project API keys.
  public let apiKeys: APIKeys
  /// The console's signed-in sessions.
  public let consoleSessions: ConsoleSessions
  /// Registered beacons with their attachments, metadata and EID registrations.
  public let beacons: BeaconTables
  /// What clients observed of the beacons, and the diagnostics derived from it.
  public let observations: BeaconObservations
  /// Namespaces, as projects claim them.
  public let namespaces: Namespaces
  /// What each project holds and did, for the console and quotas.
  public let projects: Projects
  /// The server instances sharing the database.
  public let instances: ServerInstances

  /// A transaction over a connection that is inside a database transaction.
  /// - Parameters:
  ///   - sql: the connection, inside its transaction.
  ///   - deadlineHint: the storage's, when it has one writer (see ``DeadlineHint``).
  public init(_ sql: any SQLConnection, deadlineHint: DeadlineHint? = nil) {
    self.sql = sql
    self.deadlineHint = deadlineHint
    let coding = SQLCoding()
    resolution = ResolutionTables(sql, coding: coding, deadlineHint: deadlineHint)
    locks = DeviceLocks(resolution)
    eventLog = EventLog(sql, coding: coding, resolution: resolution)
    consoleSessions = ConsoleSessions(sql)
    apiKeys = APIKeys(sql, consoleSessions: consoleSessions)
    observations = BeaconObservations(sql)
    namespaces = Namespaces(sql)
    beacons = BeaconTables(sql, namespaces: namespaces, observations: observations)
    projects = Projects(sql, coding: coding)
    instances = ServerInstances(sql)
  }

  /// Writes what the transaction's tables hold back: call once the transaction's work is
  /// done, before COMMIT (the storages do; a body never needs to). Runs on the storage's
  /// thread, like the body.
  /// - Throws: the database's error.
  public func finish() throws {
    try resolution.proximity.writePendingSightings()
  }

  /// Whether a deadline may be due at `now`: false only when the storage's hint says none
  /// is (always true without a hint).
  @_spi(Resolver) public func deadlinesMayBeDue(at now: Date) -> Bool {
    guard let hint = deadlineHint else { return true }
    guard let earliest = hint.earliest else { return true }
    return earliest <= now
  }

  /// Reads when the next deadline is due into the storage's hint (after the due ones were
  /// handled); nothing without a hint.
  /// - Throws: the database's error.
  @_spi(Resolver) public func noteNextDeadline() throws {
    guard let hint = deadlineHint else { return }
    hint.set(try resolution.deadlines.nextDeadline())
  }
}

/// The transaction, under the name code that depends on this library by version knows; its
/// methods are on the tables (``SQLTransaction/resolution``, ``SQLTransaction/beacons``, …).
@available(*, deprecated, renamed: "SQLTransaction")
public typealias SQLStore = SQLTransaction
