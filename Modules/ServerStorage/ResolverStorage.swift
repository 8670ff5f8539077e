/// Where the resolver server keeps everything: the engine's state, the event log and the API
/// keys. The server process holds nothing else, so several processes can share one database.
///
/// Two implementations pass the same test suite: ``SQLiteStorage`` (the default, a file) and
/// ``PostgresStorage`` (for several server instances behind a load balancer).
public protocol ResolverStorage: Sendable {
  /// Which database this is, for logs and `/healthz`.
  var description: String { get }

  /// Runs `body` in one transaction and returns its result: committed if `body` returns,
  /// rolled back if it throws. On SQLite transactions never interleave (one writer). On
  /// PostgreSQL they run concurrently (see ``runsConcurrently``): a body that runs the engine
  /// first locks the devices it can change (`DeviceLocks.prepare(forReport:…)`,
  /// `DeviceLocks.lockDevices(for:…)`; NearbyServer's engine operations do it),
  /// so the engine sees a consistent state and numbers events without gaps; a transaction
  /// that deadlocks or fails to serialize is run again, so `body` must not have effects
  /// outside the database.
  ///
  /// `body` runs on a thread of the storage's own (never on Swift's cooperative pool), because
  /// it makes blocking database calls.
  /// - Throws: what `body` throws, or the database's error.
  func transaction<T: Sendable>(_ body: @escaping @Sendable (SQLTransaction) throws -> T)
    async throws
    -> T

  /// Runs `body`, which only reads, in a read-only transaction that does not wait for writers
  /// (the event stream and API-key lookups use it). Same threading as ``transaction(_:)``.
  /// - Throws: what `body` throws, or the database's error.
  func read<T: Sendable>(_ body: @escaping @Sendable (SQLTransaction) throws -> T) async throws -> T

  /// Whether transactions run at the same time (PostgreSQL), so that engine work must lock
  /// the devices it changes and leave due deadlines to one transaction each; false when the
  /// database has a single writer (SQLite).
  var runsConcurrently: Bool { get }

  /// Notifications of new events written by any process that shares the database, for as
  /// long as the stream is read (ending the iteration stops listening); `nil` when only this
  /// process writes (SQLite), so the server's own wake-ups are enough.
  func eventNotifications() -> AsyncStream<EventNotification>?

  /// Closes the connections. Transactions after this throw ``SQLStorageError/shutDown``.
  func shutdown() async
}

extension ResolverStorage {
  public var runsConcurrently: Bool { false }
  public func eventNotifications() -> AsyncStream<EventNotification>? { nil }
}
