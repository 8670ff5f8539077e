import Foundation
import ServerStorage
import ServerTestSupport
import Testing
import TestSupport

/// Concurrent transactions are committed together, each in its own savepoint: one that throws
/// undoes only its own changes.
@Suite("Group commit")
struct GroupCommitTests {
  @Test(.requires(.postgres), arguments: StorageKind.allCases)
  func aFailingTransactionUndoesOnlyItself(_ kind: StorageKind) async throws {
    let storage = try await StorageFixture.make(kind)
    try await withShutdown(storage) { storage in
      let outcomes = await withTaskGroup(of: (Int, Bool).self) { group in
        for index in 0..<60 {
          group.addTask {
            do {
              try await storage.transaction { store in
                _ = try store.apiKeys.createAPIKey(
                  project: "p\(index)", role: .admin, label: "", now: Date())
                if index % 5 == 0 { throw FixtureError("transaction \(index) gives up") }
              }
              return (index, true)
            } catch {
              return (index, false)
            }
          }
        }
        return await group.reduce(into: [Int: Bool]()) { $0[$1.0] = $1.1 }
      }
      #expect(outcomes.count == 60)
      #expect(outcomes.filter { !$0.value }.keys.sorted() == Array(stride(from: 0, to: 60, by: 5)))
      let projects = try await storage.read { store in
        Set(try store.apiKeys.apiKeys().map(\.project))
      }
      #expect(projects.count == 48)
      #expect(!projects.contains("p0") && projects.contains("p1"))
    }
  }

  /// The batcher's writer belongs to the storage: shutdown ends and awaits it, and a
  /// transaction submitted after that fails at once instead of waiting for a writer gone.
  @Test func aTransactionAfterShutdownFailsAtOnce() async throws {
    let folder = FileManager.default.temporaryDirectory
      .appendingPathComponent("nearby-batcher-\(UUID().uuidString)")
    defer { try? FileManager.default.removeItem(at: folder) }
    let storage = try SQLiteStorage(path: folder.appendingPathComponent("db.sqlite").path)
    let before = try await storage.transaction { _ in 1 }
    #expect(before == 1)
    await storage.shutdown()
    await #expect(throws: SQLStorageError.shutDown) {
      try await storage.transaction { _ in 2 }
    }
  }
}
