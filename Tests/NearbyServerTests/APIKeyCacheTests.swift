import Foundation
@testable import NearbyServer
import ServerStorage
import Testing
import TestSupport

/// Made-up keys are never remembered, so a flood of them cannot push real keys out of the
/// cache (each would then cost a lookup).
@Suite("API key cache")
struct APIKeyCacheTests {
  @Test func unknownKeysAreNotRemembered() async throws {
    let storage = try SQLiteStorage(
      path: FileManager.default.temporaryDirectory
        .appendingPathComponent("nearby-keys-\(UUID().uuidString)/db.sqlite").path)
    try await withTeardown({ await storage.shutdown() }) {
      let cache = APIKeyCache(storage: storage, lifetime: .seconds(3600), capacity: 4)
      let real = try await storage.transaction { store in
        try store.apiKeys.createAPIKey(project: "p", role: .admin, label: "", now: Date())
      }
      #expect(try await cache.activeKey(real.key)?.project == "p")
      for index in 0..<100 { #expect(try await cache.activeKey("nk_made_up_\(index)") == nil) }
      // Still remembered (the flood did not evict it): revoking it in the database does not
      // show before its lifetime.
      _ = try await storage.transaction { store in
        try store.apiKeys.revokeAPIKey(id: real.record.id, now: Date())
      }
      #expect(try await cache.activeKey(real.key)?.project == "p")
    }
  }
}
