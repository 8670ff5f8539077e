import Foundation
import ServerStorage
import Testing

/// The SQLite file holds device secrets, identity keys and messages: its owner alone reads
/// it, its log and its index.
@Suite("SQLite file modes")
struct SQLiteFileModeTests {
  static func mode(_ path: String) throws -> Int {
    let attributes = try FileManager.default.attributesOfItem(atPath: path)
    return (attributes[.posixPermissions] as? NSNumber)?.intValue ?? -1
  }

  /// A storage at a new path (folder, file) that has written something.
  static func opened() async throws -> (folder: URL, path: String, storage: SQLiteStorage) {
    let folder = FileManager.default.temporaryDirectory
      .appendingPathComponent("nearby-mode-\(UUID().uuidString)/data")
    let path = folder.appendingPathComponent("resolver.sqlite").path
    let storage = try SQLiteStorage(path: path)
    _ = try await storage.transaction { store in
      try store.apiKeys.createAPIKey(project: "p", role: .admin, label: "", now: Date())
    }
    return (folder, path, storage)
  }

  @Test func aNewDatabaseAndItsFolderAreTheOwnersAlone() async throws {
    let (folder, path, storage) = try await Self.opened()
    #expect(try Self.mode(folder.path) == 0o700)
    for file in [path, path + "-wal", path + "-shm"] {
      #expect(try Self.mode(file) == 0o600, "\(file)")
    }
    await storage.shutdown()
  }

  @Test func anExistingReadableDatabaseIsRestrictedWhenOpened() async throws {
    let (_, path, first) = try await Self.opened()
    await first.shutdown()
    // As an earlier version left it: readable by every local user.
    for file in [path, path + "-wal", path + "-shm"]
    where FileManager.default.fileExists(atPath: file) {
      try FileManager.default.setAttributes([.posixPermissions: 0o644], ofItemAtPath: file)
    }
    let second = try SQLiteStorage(path: path)
    #expect(try Self.mode(path) == 0o600)
    let keys = try await second.read { store in try store.apiKeys.apiKeys(project: "p") }
    #expect(keys.count == 1)
    for file in [path + "-wal", path + "-shm"] where FileManager.default.fileExists(atPath: file) {
      #expect(try Self.mode(file) == 0o600, "\(file)")
    }
    await second.shutdown()
  }
}
