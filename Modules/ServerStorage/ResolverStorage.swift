/// Where the resolver server keeps everything: the engine's state, the event log and the API
/// keys. The server process holds nothing else, so several processes can share one database.
///
/// Two implementations pass the same test suite: ``SQLiteStorage`` (the default, a file) and
/// ``PostgresStorage`` (for several server instances behind a load balancer).
public protocol ResolverStorage: Sendable {
  /// Which database this is, for logs and `/healthz`.
  var description: String { get }

  /// Runs `body` in one transaction and returns its result: committed if `body` returns,
  /// rolled back if it throws. Transactions that change resolver state never interleave
  /// (SQLite has one writer; PostgreSQL takes a transaction-scoped advisory lock), so the
  /// engine sees a consistent state and numbers events without gaps.
  ///
  /// `body` runs on a thread of the storage's own (never on Swift's cooperative pool), because
  /// it makes blocking database calls.
  /// - Throws: what `body` throws, or the database's error.
  func transaction<T: Sendable>(_ body: @escaping @Sendable (SQLStore) throws -> T) async throws
    -> T

  /// Runs `body`, which only reads, in a read-only transaction that does not wait for writers
  /// (the event stream and API-key lookups use it). Same threading as ``transaction(_:)``.
  /// - Throws: what `body` throws, or the database's error.
  func read<T: Sendable>(_ body: @escaping @Sendable (SQLStore) throws -> T) async throws -> T

  /// Closes the connections. Transactions after this throw ``SQLStorageError/shutDown``.
  func shutdown() async
}
