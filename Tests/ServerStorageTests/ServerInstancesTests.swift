import Foundation
import ServerStorage
import ServerTestSupport
import Testing
import TestSupport

/// Server instances sharing a database count each other there, so that rate limits meant for
/// all of them are divided among them.
@Suite("Server instances")
struct ServerInstancesTests {
  @Test(.requires(.postgres), arguments: StorageKind.allCases)
  func instancesCountEachOtherAndAreForgotten(_ kind: StorageKind) async throws {
    let storage = try await StorageFixture.make(kind)
    try await withShutdown(storage) { storage in
      let t0 = Date(timeIntervalSince1970: 1_800_000_000)
      let first = try await storage.transaction {
        try $0.instances.heartbeat(instance: "a", now: t0)
      }
      #expect(first == 1)
      let both = try await storage.transaction {
        try $0.instances.heartbeat(instance: "b", now: t0.addingTimeInterval(1))
      }
      #expect(both == 2)
      // "a" says nothing for 20 s: "b" is alone again.
      let alone = try await storage.transaction {
        try $0.instances.heartbeat(instance: "b", now: t0.addingTimeInterval(20))
      }
      #expect(alone == 1)
      try await storage.transaction { try $0.instances.forgetInstance("b") }
      let none = try await storage.read { store in
        try store.sql.queryFirst("SELECT COUNT(*) FROM server_instances", [])?.integer(0)
      }
      #expect(none == 0)
    }
  }
}
