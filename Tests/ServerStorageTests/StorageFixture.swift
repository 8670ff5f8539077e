import Foundation
import Logging
import NIOPosix
import PostgresNIO
import ServerStorage
import Testing

/// The storages every test of this target runs against.
enum StorageKind: String, CaseIterable, Sendable, CustomTestStringConvertible {
  case sqlite
  case postgres

  var testDescription: String { rawValue }
}

/// A fresh, empty storage of a kind: a new SQLite file, or a new database on the PostgreSQL
/// server that `Tools/scripts/test.sh` starts (`NEARBY_TEST_POSTGRES_URL`).
enum StorageFixture {
  static func make(_ kind: StorageKind) async throws -> any ResolverStorage {
    switch kind {
    case .sqlite:
      let folder = FileManager.default.temporaryDirectory
        .appendingPathComponent("nearby-store-\(UUID().uuidString)")
      return try SQLiteStorage(path: folder.appendingPathComponent("resolver.sqlite").path)
    case .postgres:
      return try await PostgresStorage(url: try await freshPostgresDatabase())
    }
  }

  /// The test server's URL.
  /// - Throws: a message naming the test command when the variable is missing.
  static func postgresURL() throws -> String {
    guard let url = ProcessInfo.processInfo.environment["NEARBY_TEST_POSTGRES_URL"] else {
      throw FixtureError(
        "NEARBY_TEST_POSTGRES_URL is not set: run the tests with Tools/scripts/test.sh, which "
          + "starts a private PostgreSQL server")
    }
    return url
  }

  /// Creates an empty database on the test server and returns its URL.
  static func freshPostgresDatabase() async throws -> String {
    let base = try postgresURL()
    guard var components = URLComponents(string: base), let host = components.host else {
      throw FixtureError("bad NEARBY_TEST_POSTGRES_URL \(base)")
    }
    let name = "t_" + UUID().uuidString.lowercased().replacingOccurrences(of: "-", with: "")
    let configuration = PostgresConnection.Configuration(
      host: host, port: components.port ?? 5432, username: components.user ?? "nearby",
      password: nil, database: "postgres", tls: .disable)
    let connection = try await PostgresConnection.connect(
      configuration: configuration, id: 1, logger: Logger(label: "test.postgres"))
    do {
      try await connection.query(
        PostgresQuery(unsafeSQL: "CREATE DATABASE \(name)"), logger: Logger(label: "test.postgres"))
    } catch {
      try? await connection.close()
      throw error
    }
    try await connection.close()
    components.path = "/" + name
    return components.string!
  }
}

struct FixtureError: Error, CustomStringConvertible {
  let description: String
  init(_ description: String) { self.description = description }
}
