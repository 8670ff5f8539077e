import Foundation
import Resolution
import Synchronization
import Testing

@testable import NearbyServer

@Suite("EID index cache")
struct EIDIndexCacheTests {
  @Test("concurrent requests without an index share one build; an invalidation forces a new one")
  func sharedBuild() async throws {
    let cache = EIDIndexCache()
    let loads = Mutex(0)
    let registration = try EddystoneEIDRegistration(
      identityKey: Array(0..<16), rotationExponent: 10, clockValue: 0, registeredAt: Date())
    let load: EIDIndexCache.Loader = {
      loads.withLock { $0 += 1 }
      try await Task.sleep(for: .milliseconds(50))
      return [(name: "eddystone-eid!beacon", registration: registration)]
    }
    let now = Date()
    let counts = try await withThrowingTaskGroup(of: Int.self) { group in
      for _ in 0..<10 {
        group.addTask { try await cache.index(project: "p", now: now, load: load).count }
      }
      return try await group.reduce(into: [Int]()) { $0.append($1) }
    }
    #expect(counts.count == 10 && counts.allSatisfy { $0 > 0 })
    #expect(loads.withLock { $0 } == 1)
    _ = try await cache.index(project: "p", now: now, load: load)
    #expect(loads.withLock { $0 } == 1)  // cached
    await cache.invalidate(project: "p")
    _ = try await cache.index(project: "p", now: now, load: load)
    #expect(loads.withLock { $0 } == 2)
  }
}
