import Logging
import PostgresNIO

/// A PostgreSQL connection used synchronously from a blocking-pool thread: each statement is
/// sent and its answer awaited with `wait()`, which is allowed off the connection's event loop.
/// Statements with binds run as statements prepared once per connection where their types
/// allow (see ``PreparedStatementCache``).
final class PostgresSQLConnection: SQLConnection {
  private let connection: PostgresConnection
  private let logger: Logger
  private let prepared: PreparedStatementCache?
  private let statements = PostgresStatements()

  /// - Parameter prepared: the storage's cache; nil runs every statement unnamed.
  init(_ connection: PostgresConnection, prepared: PreparedStatementCache?, logger: Logger) {
    self.connection = connection
    self.prepared = prepared
    self.logger = logger
  }

  var dialect: SQLDialect { .postgres }

  func execute(_ sql: String, _ binds: [SQLValue]) throws {
    _ = try run(sql, binds)
  }

  func query(_ sql: String, _ binds: [SQLValue]) throws -> [SQLRow] {
    let (rows, prepared) = try run(sql, binds)
    // A prepared statement's rows come in binary, as all of PostgresNIO's extended queries
    // ask, but this PostgresNIO labels them with the text format of the statement's
    // description (its prepare hands on the description it received, not the one it fixed).
    return try rows.map { try PostgresStatements.row($0, binary: prepared) }
  }

  /// The rows, and whether they came from a prepared statement.
  private func run(_ sql: String, _ binds: [SQLValue]) throws -> (
    rows: [PostgresRow], prepared: Bool
  ) {
    do {
      if let prepared, !binds.isEmpty,
        case .prepared(let statement, let types) = try entry(for: sql, in: prepared),
        PreparedStatementCache.fits(binds, types)
      {
        return (try statement.execute(binds.map(PreparedStatementCache.data)).wait(), true)
      }
      return (
        Array(try connection.query(statements.query(sql, binds), logger: logger).wait()), false
      )
    } catch {
      // 26000: a prepared statement is gone; 0A000: a cached plan no longer fits the schema
      // (another instance migrated it). Prepare anew next time.
      if let state = PostgresStatements.sqlState(of: error), state == "26000" || state == "0A000" {
        prepared?.forget(connection.id)
      }
      throw PostgresStatements.mapped(error)
    }
  }

  /// This connection's entry for the statement, prepared (and its parameter types read) if
  /// it has none.
  private func entry(for sql: String, in cache: PreparedStatementCache) throws
    -> PreparedStatementCache.Entry
  {
    let text = statements.numberedPlaceholders(sql)
    if let known = cache.entry(connection.id, text) { return known }
    let statement = try connection.prepare(query: text).wait()
    var bindings = PostgresBindings()
    bindings.append(text)
    let rows = try connection.query(
      PostgresQuery(
        unsafeSQL:
          "SELECT parameter_types::text[] FROM pg_prepared_statements WHERE statement = $1",
        binds: bindings), logger: logger
    ).wait()
    let types = try rows.first.map { try $0.decode([String].self) } ?? []
    let known: Set<String> = ["bigint", "double precision", "text", "bytea"]
    let entry: PreparedStatementCache.Entry
    if !rows.isEmpty, types.allSatisfy(known.contains) {
      entry = .prepared(statement, parameterTypes: types)
    } else {
      _ = try? statement.deallocate().wait()
      entry = .unnamed
    }
    cache.store(entry, connection.id, text)
    return entry
  }
}
