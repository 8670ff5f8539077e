@_spi(Resolver) import Core
import Foundation
@_spi(Resolver) import ServerStorage
import Strategy
import ServerTestSupport
import TestSupport
import Testing

@Suite("Schema migrations")
struct MigrationTests {
  @Test func reopeningASQLiteFileKeepsItsData() async throws {
    let path = FileManager.default.temporaryDirectory
      .appendingPathComponent("nearby-reopen-\(UUID().uuidString)/db.sqlite").path
    let first = try SQLiteStorage(path: path)
    let key = try await first.transaction { store in
      try store.apiKeys.createAPIKey(project: "p", role: .admin, label: "", now: Date())
    }
    await first.shutdown()
    let second = try SQLiteStorage(path: path)
    let found = try await second.transaction { store in try store.apiKeys.apiKey(key.key) }
    #expect(found?.project == "p")
    await second.shutdown()
  }

  @Test(.requires(.postgres), arguments: StorageKind.allCases)
  func aVersionTwoDatabaseGainsTheNewTablesAndKeepsItsBeacons(_ kind: StorageKind) async throws {
    // One database opened twice: a SQLite file, or a PostgreSQL database.
    let open: () async throws -> any ResolverStorage
    switch kind {
    case .sqlite:
      let path = FileManager.default.temporaryDirectory
        .appendingPathComponent("nearby-v2-\(UUID().uuidString)/db.sqlite").path
      open = { try SQLiteStorage(path: path) }
    case .postgres:
      let url = try await TestPostgres.freshDatabase()
      open = { try await PostgresStorage(url: url) }
    }
    let first = try await open()
    let id = try BeaconID(kind: .eddystoneUID, hex: String(repeating: "ab", count: 16))
    let key = try await first.transaction { store in
      _ = try store.beacons.registerBeacon(
        project: "p", advertisedID: id, description: "old", attachments: [], now: Date())
      let key = try store.apiKeys.createAPIKey(project: "p", role: .client, label: "", now: Date())
      // Back to version 2: as a database written before EID beacons (stored messages, roles,
      // namespaces and lifecycle).
      try Self.undoVersion9(store)
      try Self.undoVersion8(store)
      try Self.undoVersion7(store)
      try Self.undoVersion6(store)
      try store.sql.execute("ALTER TABLE api_keys DROP COLUMN role")
      try store.sql.execute("DROP INDEX devices_by_last_report")
      try store.sql.execute("DROP INDEX devices_by_project")
      try store.sql.execute("DROP TABLE server_instances")
      for column in ["last_report_at", "new_neighbors_since", "new_neighbors"] {
        try store.sql.execute("ALTER TABLE devices DROP COLUMN \(column)")
      }
      try store.sql.execute("DROP INDEX events_by_message")
      try store.sql.execute("ALTER TABLE events DROP COLUMN message")
      try store.sql.execute("DROP TABLE messages")
      try store.sql.execute("DROP TABLE beacon_eids")
      try store.sql.execute("DELETE FROM schema_migrations WHERE version >= 3")
      return key
    }
    await first.shutdown()
    let second = try await open()
    let (beacons, eids, oldKey, version) = try await second.transaction { store in
      (
        try store.beacons.beacons(project: "p"), try store.beacons.eidBeacons(project: "p"),
        try store.apiKeys.apiKey(key.key),
        try store.sql.queryFirst("SELECT MAX(version) FROM schema_migrations", [])?.integer(0)
      )
    }
    #expect(beacons.map(\.description) == ["old"])
    #expect(eids.isEmpty)
    // A key from before roles did everything: it stays an admin key.
    #expect(oldKey?.role == .admin)
    #expect(version == 9)
    await second.shutdown()
  }

  /// Drops what version 9 added (the refresh report's function, PostgreSQL only).
  static func undoVersion9(_ store: SQLTransaction) throws {
    guard store.sql.dialect == .postgres else { return }
    try store.sql.execute("DROP FUNCTION nearby_refresh_report")
  }

  /// Drops what version 8 added (scoped ids, EID keys per project, sessions).
  static func undoVersion8(_ store: SQLTransaction) throws {
    try store.sql.execute("ALTER TABLE devices DROP COLUMN scoped_handles")
    try store.sql.execute("DROP TABLE eid_project_keys")
    try store.sql.execute("DROP INDEX console_sessions_by_key")
    try store.sql.execute("DROP TABLE console_sessions")
  }

  /// Drops what version 7 added (beacon diagnostics, what EID matches taught).
  static func undoVersion7(_ store: SQLTransaction) throws {
    try store.sql.execute("DROP TABLE beacon_diagnostics")
    try store.sql.execute("DROP TABLE beacon_battery_samples")
    try store.sql.execute("ALTER TABLE beacon_eids DROP COLUMN clock_offset")
    try store.sql.execute("ALTER TABLE beacon_eids DROP COLUMN last_matched_at")
  }

  /// Drops what version 6 added (namespaces, the beacon lifecycle and metadata).
  static func undoVersion6(_ store: SQLTransaction) throws {
    try store.sql.execute("DROP TABLE namespaces")
    try store.sql.execute("DROP TABLE beacon_properties")
    try store.sql.execute("DROP TABLE eid_service_keys")
    try store.sql.execute("DROP INDEX beacons_by_time")
    try store.sql.execute("ALTER TABLE attachments DROP COLUMN max_distance_meters")
    for column in [
      "status", "place", "latitude", "longitude", "indoor_level", "expected_stability",
    ] {
      try store.sql.execute("ALTER TABLE beacons DROP COLUMN \(column)")
    }
  }

  @Test(.requires(.postgres), arguments: StorageKind.allCases)
  func namespacesInUseGoToTheProjectThatAttachedFirst(_ kind: StorageKind) async throws {
    let open: () async throws -> any ResolverStorage
    switch kind {
    case .sqlite:
      let path = FileManager.default.temporaryDirectory
        .appendingPathComponent("nearby-v5-\(UUID().uuidString)/db.sqlite").path
      open = { try SQLiteStorage(path: path) }
    case .postgres:
      let url = try await TestPostgres.freshDatabase()
      open = { try await PostgresStorage(url: url) }
    }
    let first = try await open()
    try await first.transaction { store in
      // Version 5 let any project attach in any namespace: "shared.ns" by q at 200 and by p
      // at 100, "q.ns" by q only.
      try Self.undoVersion9(store)
      try Self.undoVersion8(store)
      try Self.undoVersion7(store)
      try Self.undoVersion6(store)
      try store.sql.execute("DELETE FROM schema_migrations WHERE version >= 6")
      for (project, namespace, time) in [
        ("q", "shared.ns", 200.0), ("p", "shared.ns", 100.0), ("q", "q.ns", 300.0),
      ] {
        try store.sql.execute(
          """
          INSERT INTO attachments (project, beacon, name, namespace, type, data, created_at)
          VALUES (?, 'b', ?, ?, 't', ?, ?)
          """,
          [
            .text(project), .text("\(namespace)-\(time)"), .text(namespace), .blob([1]),
            .real(time),
          ])
      }
    }
    await first.shutdown()
    let second = try await open()
    let (shared, own) = try await second.read { store in
      (try store.namespaces.namespace("shared.ns"), try store.namespaces.namespace("q.ns"))
    }
    #expect(shared?.project == "p")
    #expect(shared?.visibility == .unlisted)
    #expect(own?.project == "q")
    // q keeps what it attached before, but attaches no more there.
    await #expect(throws: BeaconInputError.self) {
      try await second.transaction { store in
        _ = try store.namespaces.claimNamespace(project: "q", name: "shared.ns", now: Date())
      }
    }
    await second.shutdown()
  }

  @Test func aDatabaseFromANewerProgramIsRefused() async throws {
    let path = FileManager.default.temporaryDirectory
      .appendingPathComponent("nearby-newer-\(UUID().uuidString)/db.sqlite").path
    let storage = try SQLiteStorage(path: path)
    try await storage.transaction { store in
      try store.sql.execute("INSERT INTO schema_migrations (version) VALUES (999)")
    }
    await storage.shutdown()
    #expect(throws: SQLStorageError.self) { try SQLiteStorage(path: path) }
  }

  @Test func badPostgresURLsNameTheFix() async throws {
    for url in ["mysql://u@h/db", "postgres://h/db", "postgres://u@h/"] {
      await #expect(throws: SQLStorageError.self) { _ = try await PostgresStorage(url: url) }
    }
  }

  @Test func theDefaultFileFollowsXDGDataHome() {
    #expect(
      SQLiteStorage.defaultPath(environment: ["XDG_DATA_HOME": "/data", "HOME": "/home/u"])
        == "/data/nearby/resolver.sqlite")
    #expect(
      SQLiteStorage.defaultPath(environment: ["HOME": "/home/u"])
        == "/home/u/.local/share/nearby/resolver.sqlite")
    #expect(
      SQLiteStorage.defaultPath(environment: ["XDG_DATA_HOME": "relative", "HOME": "/home/u"])
        == "/home/u/.local/share/nearby/resolver.sqlite")
  }
}
