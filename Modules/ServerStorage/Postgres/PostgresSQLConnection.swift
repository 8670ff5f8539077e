import Logging
import PostgresNIO

/// A PostgreSQL connection used synchronously from a blocking-pool thread: each statement is
/// sent and its answer awaited with `wait()`, which is allowed off the connection's event loop.
final class PostgresSQLConnection: SQLConnection {
  private let connection: PostgresConnection
  private let logger: Logger
  private let statements = PostgresStatements()

  init(_ connection: PostgresConnection, logger: Logger) {
    self.connection = connection
    self.logger = logger
  }

  var dialect: SQLDialect { .postgres }

  func execute(_ sql: String, _ binds: [SQLValue]) throws {
    _ = try run(sql, binds)
  }

  func query(_ sql: String, _ binds: [SQLValue]) throws -> [SQLRow] {
    try run(sql, binds).map(PostgresStatements.row)
  }

  private func run(_ sql: String, _ binds: [SQLValue]) throws -> PostgresQueryResult {
    let query = statements.query(sql, binds)
    do {
      return try connection.query(query, logger: logger).wait()
    } catch {
      throw PostgresStatements.mapped(error)
    }
  }
}
