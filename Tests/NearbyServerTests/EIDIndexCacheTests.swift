import Foundation
import Resolution
import Synchronization
import Testing
import TestSupport

@testable import NearbyServer
import NearbyTesting

@Suite("EID index cache")
struct EIDIndexCacheTests {
  @Test("concurrent requests without an index share one build; an invalidation forces a new one")
  func sharedBuild() async throws {
    let cache = EIDIndexCache()
    let loads = Watched(0)
    let registration = try EddystoneEIDRegistration(
      identityKey: Array(0..<16), rotationExponent: 10, clockValue: 0, registeredAt: Date())
    // The first build holds on until every request has been made, so the others find it
    // running (a request that came after it would find the index instead: one load either way).
    let requested = Watched(0)
    let request: @Sendable () -> Void = { requested.withLock { $0 += 1 } }
    let buildMayEnd = Watched(false)
    let load: EIDIndexCache.Loader = {
      loads.withLock { $0 += 1 }
      _ = await buildMayEnd.until { $0 }
      return [(name: "eddystone-eid!beacon", registration: registration)]
    }
    let now = Date()
    let counts = try await withThrowingTaskGroup(of: Int.self) { group in
      for _ in 0..<10 {
        group.addTask {
          request()
          return try await cache.index(project: "p", now: now, load: load).count
        }
      }
      #expect(await loads.until { $0 >= 1 })
      #expect(await requested.until { $0 == 10 })
      buildMayEnd.withLock { $0 = true }
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

  /// A build runs in the task of the request that began it: when that request goes away
  /// mid-build (its client disconnected), a request waiting for the build builds for itself.
  @Test("a build whose request is cancelled is taken over by a request waiting for it")
  func aCancelledBuildIsTakenOver() async throws {
    let cache = EIDIndexCache()
    let loads = Watched(0)
    let registration = try EddystoneEIDRegistration(
      identityKey: Array(0..<16), rotationExponent: 10, clockValue: 0, registeredAt: Date())
    // The first load waits until cancelled; later ones answer at once.
    let load: EIDIndexCache.Loader = {
      let number = loads.withLock {
        $0 += 1
        return $0
      }
      if number == 1 { try await untilCancelled() }
      return [(name: "eddystone-eid!beacon", registration: registration)]
    }
    let now = Date()
    let first = Task { try await cache.index(project: "p", now: now, load: load) }
    #expect(await loads.until { $0 == 1 })
    let second = Task { try await cache.index(project: "p", now: now, load: load) }
    // The second request waits for the first build (it starts no load of its own) ...
    #expect(await eventually { await cache.waitingRequests == 1 })
    #expect(loads.withLock { $0 } == 1)
    first.cancel()
    await #expect(throws: CancellationError.self) { try await first.value }
    // ... and builds once that one's request is gone.
    #expect(try await second.value.count > 0)
    #expect(loads.withLock { $0 } == 2)
  }

  /// Issue 29, finding 9: alternating changes to one beacon and look-ups rebuilt the
  /// project's whole index each time; now the beacon changes in place and the index is built
  /// once, and it answers as a fresh one would.
  @Test func aChangedBeaconIsUpdatedInPlace() async throws {
    let cache = EIDIndexCache()
    let loads = Mutex(0)
    let now = Date()
    func registration(_ seed: UInt8) throws -> EddystoneEIDRegistration {
      try EddystoneEIDRegistration(
        identityKey: (0..<16).map { UInt8($0) &+ seed }, rotationExponent: 10, clockValue: 0,
        registeredAt: now)
    }
    let (first, second) = (try registration(0), try registration(100))
    let load: EIDIndexCache.Loader = {
      loads.withLock { $0 += 1 }
      return [(name: "a", registration: first), (name: "b", registration: first)]
    }
    let eidOfSecond = second.generator.eid(beaconTime: UInt32(second.beaconTime(at: now)))
    let eidOfFirst = first.generator.eid(beaconTime: UInt32(first.beaconTime(at: now)))
    for round in 0..<20 {
      let index = try await cache.index(project: "p", now: now, load: load)
      if round.isMultiple(of: 2) {
        #expect(index.beacon(for: eidOfFirst, at: now) != nil)
        await cache.update(project: "p", beacon: "a", registration: second)
      } else {
        #expect(index.beacon(for: eidOfSecond, at: now) == "a")
        await cache.update(project: "p", beacon: "a", registration: nil)
        await cache.update(project: "p", beacon: "b", registration: nil)
        let emptied = try await cache.index(project: "p", now: now, load: load)
        #expect(emptied.beacon(for: eidOfSecond, at: now) == nil)
        #expect(emptied.beacon(for: eidOfFirst, at: now) == nil)
        await cache.update(project: "p", beacon: "a", registration: first)
        await cache.update(project: "p", beacon: "b", registration: first)
      }
    }
    #expect(loads.withLock { $0 } == 1)
    #expect(await cache.builds == 1)
  }
}
