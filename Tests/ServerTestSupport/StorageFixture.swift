import Foundation
public import ServerStorage
public import TestSupport
public import Testing

/// The storages the storage and engine tests run against.
public enum StorageKind: String, CaseIterable, Sendable, CustomTestStringConvertible {
  case sqlite
  case postgres

  public var testDescription: String { rawValue }
}

/// A fresh, empty storage of a kind: a new SQLite file, or a new database on the test
/// PostgreSQL server.
public enum StorageFixture {
  public static func make(_ kind: StorageKind) async throws -> any ResolverStorage {
    switch kind {
    case .sqlite:
      let folder = FileManager.default.temporaryDirectory
        .appendingPathComponent("nearby-store-\(UUID().uuidString)")
      return try SQLiteStorage(path: folder.appendingPathComponent("resolver.sqlite").path)
    case .postgres:
      return try await PostgresStorage(url: try await TestPostgres.freshDatabase())
    }
  }
}

/// Runs `body` with `storage`, then awaits its shutdown whether `body` returned or threw.
public func withShutdown<Result>(
  _ storage: any ResolverStorage, isolation: isolated (any Actor)? = #isolation,
  _ body: (any ResolverStorage) async throws -> Result
) async throws -> Result {
  try await withTeardown({ await storage.shutdown() }) { try await body(storage) }
}

extension PostgresStorage: AsyncShutdown {}
extension SQLiteStorage: AsyncShutdown {}
