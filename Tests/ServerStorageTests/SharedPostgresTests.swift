@_spi(Resolver) import Core
import Foundation
@_spi(Resolver) import Resolution
@_spi(Resolver) import ServerStorage
import ServerTestSupport
import Testing

/// Two server instances on one PostgreSQL database: their transactions are serialized by the
/// advisory lock, so concurrent reports never lose an update.
@Suite("Two instances on one PostgreSQL database")
struct SharedPostgresTests {
  @Test func concurrentReportsFromTwoInstancesLoseNoUpdate() async throws {
    let url = try await TestPostgres.freshDatabase()
    async let first = PostgresStorage(url: url)
    async let second = PostgresStorage(url: url)  // both migrate at once: only one does
    let instances: [any ResolverStorage] = try await [first, second]
    defer { for instance in instances { Task { await instance.shutdown() } } }
    let t0 = Date(timeIntervalSince1970: 1_800_000_000)
    let device = try await EngineOnStorageTests.engine(instances[0]) {
      try $0.register(project: "p", now: t0)
    }
    let revisions = try await withThrowingTaskGroup(of: UInt64.self) { group in
      for index in 0..<60 {
        let storage = instances[index % 2]
        group.addTask {
          try await EngineOnStorageTests.engine(storage) {
            try $0.report(Report(), from: device, now: t0).answer.directives.revision
          }
        }
      }
      return try await group.reduce(into: []) { $0.append($1) }
    }
    // Each report raised the revision by one, in some order: 1...60, none repeated.
    #expect(revisions.sorted() == Array(1...60))
  }
}
