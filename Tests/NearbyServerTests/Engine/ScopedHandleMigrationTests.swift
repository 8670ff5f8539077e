@_spi(Resolver) import Core
import Foundation
@_spi(Resolver) import NearbyServer
@_spi(Resolver) import ServerStorage
import ServerTestSupport
import Strategy
import TestSupport
import Testing

/// Issue 29, finding 7: ids are scoped for devices registered from version 8 on; a device
/// from before keeps the ids it sent (its app knows them, and its handles live on).
@Suite("Scoped ids across the migration")
struct ScopedHandleMigrationTests {
  @Test(.requires(.postgres), arguments: StorageKind.allCases)
  func aDeviceFromBeforeKeepsItsIDsAsSent(_ kind: StorageKind) async throws {
    let open: () async throws -> any ResolverStorage
    switch kind {
    case .sqlite:
      let path = FileManager.default.temporaryDirectory
        .appendingPathComponent("nearby-v7-\(UUID().uuidString)/db.sqlite").path
      open = { try SQLiteStorage(path: path) }
    case .postgres:
      let url = try await TestPostgres.freshDatabase()
      open = { try await PostgresStorage(url: url) }
    }
    let first = try await open()
    let old = try await first.register(project: "p", configuration: .init(), now: Date())
    try await first.transaction { store in
      try Self.undoVersion9(store)
      try Self.undoVersion8(store)
      try store.sql.execute("DELETE FROM schema_migrations WHERE version >= 8")
    }
    await first.shutdown()
    let second = try await open()
    let new = try await second.register(project: "p", configuration: .init(), now: Date())
    let id = PublicationID.random()
    let report = Report(
      publish: [.init(id: id, message: Message(text: "hi", type: "t"), strategy: .default)])
    for device in [old, new] {
      _ = try await second.report(report, from: device, configuration: .init(), now: Date())
    }
    let (oldIDs, newIDs) = try await second.read { store in
      (
        try store.resolution.handles.publications(on: old.id).map(\.id),
        try store.resolution.handles.publications(on: new.id).map(\.id)
      )
    }
    #expect(oldIDs == [id])
    #expect(newIDs.count == 1 && newIDs != [id])
    await second.shutdown()
  }

  /// Drops what version 9 added (the refresh report's function, PostgreSQL only).
  private static func undoVersion9(_ store: SQLTransaction) throws {
    guard store.sql.dialect == .postgres else { return }
    try store.sql.execute("DROP FUNCTION nearby_refresh_report")
  }

  /// Drops what version 8 added (scoped ids, EID keys per project, sessions).
  private static func undoVersion8(_ store: SQLTransaction) throws {
    try store.sql.execute("ALTER TABLE devices DROP COLUMN scoped_handles")
    try store.sql.execute("DROP TABLE eid_project_keys")
    try store.sql.execute("DROP INDEX console_sessions_by_key")
    try store.sql.execute("DROP TABLE console_sessions")
  }
}
