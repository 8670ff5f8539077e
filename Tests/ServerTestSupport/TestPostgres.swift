import Foundation
import Logging
import PostgresNIO

/// Test databases on the PostgreSQL server that `Tools/scripts/test.sh` starts
/// (`NEARBY_TEST_POSTGRES_URL`), shared by the storage and server test targets.
public enum TestPostgres {
  /// The test server's URL.
  /// - Throws: a message naming the test command when the variable is missing.
  public static func url() throws -> String {
    guard let url = ProcessInfo.processInfo.environment["NEARBY_TEST_POSTGRES_URL"] else {
      throw FixtureError(
        "NEARBY_TEST_POSTGRES_URL is not set: run the tests with Tools/scripts/test.sh, which "
          + "starts a private PostgreSQL server")
    }
    return url
  }

  /// The PEM certificate of the CA that signed the test server's certificate (for
  /// `localhost` and `127.0.0.1`), from `NEARBY_TEST_POSTGRES_CA`.
  /// - Throws: a message naming the test command when the variable is missing.
  public static func certificateAuthority() throws -> String {
    try variable(
      "NEARBY_TEST_POSTGRES_CA", what: "a PostgreSQL server with TLS and the CA that signed it")
  }

  /// The role whose members log in to the test server over TCP with a password
  /// (scram-sha-256), from `NEARBY_TEST_POSTGRES_PASSWORD_GROUP`.
  /// - Throws: a message naming the test command when the variable is missing.
  public static func passwordGroup() throws -> String {
    try variable(
      "NEARBY_TEST_POSTGRES_PASSWORD_GROUP",
      what: "a PostgreSQL server where this role's members need a password")
  }

  private static func variable(_ name: String, what: String) throws -> String {
    guard let value = ProcessInfo.processInfo.environment[name], !value.isEmpty else {
      throw FixtureError(
        "\(name) is not set: run the tests with Tools/scripts/test.sh, which starts \(what)")
    }
    return value
  }

  /// Runs `sql` as the test server's superuser in the "postgres" database.
  public static func execute(_ sql: String) async throws {
    let base = try url()
    guard let components = URLComponents(string: base), let host = components.host else {
      throw FixtureError("bad NEARBY_TEST_POSTGRES_URL \(base)")
    }
    let configuration = PostgresConnection.Configuration(
      host: host, port: components.port ?? 5432, username: components.user ?? "nearby",
      password: nil, database: "postgres", tls: .disable)
    let logger = Logger(label: "test.postgres")
    let connection = try await PostgresConnection.connect(
      configuration: configuration, id: 1, logger: logger)
    do {
      try await connection.query(PostgresQuery(unsafeSQL: sql), logger: logger)
    } catch {
      try? await connection.close()
      throw error
    }
    try await connection.close()
  }

  /// Creates an empty database on the test server and returns its URL.
  public static func freshDatabase() async throws -> String {
    let base = try url()
    guard var components = URLComponents(string: base), components.host != nil else {
      throw FixtureError("bad NEARBY_TEST_POSTGRES_URL \(base)")
    }
    let name = "t_" + UUID().uuidString.lowercased().replacingOccurrences(of: "-", with: "")
    try await execute("CREATE DATABASE \(name)")
    components.path = "/" + name
    guard let url = components.string else { throw FixtureError("cannot build a URL for \(name)") }
    return url
  }
}

extension TestPostgres {
  /// Runs `body` while another session holds a transaction on the database at `url` that has
  /// run `lockSQL` (a `SELECT … FOR UPDATE`, say), then rolls it back: what the server does
  /// meanwhile meets those locks.
  /// - Throws: a connection or statement failure, or what `body` throws.
  public static func whileLocked(
    in url: String, _ lockSQL: String, _ body: () async throws -> Void
  ) async throws {
    guard let components = URLComponents(string: url), let host = components.host else {
      throw FixtureError("bad database URL \(url)")
    }
    let configuration = PostgresConnection.Configuration(
      host: host, port: components.port ?? 5432, username: components.user ?? "nearby",
      password: nil, database: String(components.path.dropFirst()), tls: .disable)
    let logger = Logger(label: "test.postgres.lock")
    let connection = try await PostgresConnection.connect(
      configuration: configuration, id: 2, logger: logger)
    do {
      try await connection.query("BEGIN", logger: logger)
      try await connection.query(PostgresQuery(unsafeSQL: lockSQL), logger: logger)
      try await body()
      try await connection.query("ROLLBACK", logger: logger)
    } catch {
      try? await connection.close()
      throw error
    }
    try await connection.close()
  }
}

/// A test set-up problem, with what to do about it.
public struct FixtureError: Error, CustomStringConvertible {
  public let description: String
  public init(_ description: String) { self.description = description }
}
