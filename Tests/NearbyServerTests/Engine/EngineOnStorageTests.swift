@_spi(Resolver) import Core
import ServerTestSupport
import Foundation
@_spi(Resolver) import Resolution
@_spi(Resolver) import NearbyServer
@_spi(Resolver) import ServerStorage
import Strategy
import Testing
import TestSupport
import Tokens

/// The resolution engine run transaction by transaction over each database, as the server
/// runs it: a fresh engine and store per transaction, nothing kept in between.
@Suite("Engine over SQL storage")
struct EngineOnStorageTests {
  static let configuration = ResolutionConfiguration(
    lostAfter: .seconds(10), tokenLifetime: .seconds(900), tokenGrace: .seconds(60))

  /// Runs `body` with an engine over the transaction's store.
  static func engine<T: Sendable>(
    _ storage: any ResolverStorage,
    _ body: @escaping @Sendable (ResolutionEngine<ResolutionTables>) throws -> T
  ) async throws -> T {
    try await storage.transaction { store in
      try body(ResolutionEngine(store: store.resolution, configuration: configuration))
    }
  }

  @Test(.requires(.postgres), arguments: StorageKind.allCases)
  func foundThenLostAcrossTransactions(_ kind: StorageKind) async throws {
    let storage = try await StorageFixture.make(kind)
    try await withShutdown(storage) { storage in
      let t0 = Date(timeIntervalSince1970: 1_800_000_000)
      let alice = try await Self.engine(storage) { try $0.register(project: "p", now: t0) }
      let bob = try await Self.engine(storage) { try $0.register(project: "p", now: t0) }
      let subscription = SubscriptionID.random()
      let message = Message(text: "Alice", type: "name")
      _ = try await Self.engine(storage) {
        try $0.report(
          Report(publish: [PublicationSpec(id: .random(), message: message, strategy: .default)]),
          from: alice, now: t0)
      }
      let bobScans = try await Self.engine(storage) {
        try $0.report(
          Report(subscribe: [SubscriptionSpec(id: subscription, type: "name")]), from: bob, now: t0
        ).answer.directives.scan
      }
      #expect(bobScans == .default)
      let aliceToken = try await Self.engine(storage) {
        try $0.report(Report(), from: alice, now: t0).answer.directives.token
      }
      let heard = try await Self.engine(storage) {
        try $0.report(
          Report(sightings: [Sighting(token: aliceToken, medium: .ble, time: t0)]), from: bob,
          now: t0.addingTimeInterval(1)
        ).answer
      }
      #expect(heard.events == [SequencedEvent(sequence: 1, event: .found(subscription, message))])
      let early = try await Self.engine(storage) { try $0.sweep(now: t0.addingTimeInterval(10)) }
      #expect(early.isEmpty)
      let lost = try await Self.engine(storage) { try $0.sweep(now: t0.addingTimeInterval(11)) }
      #expect(
        lost == [DeviceEvent(device: bob.id, sequence: 2, event: .lost(subscription, message))])
      let counts = try await storage.transaction { try $0.resolution.counts() }
      #expect(counts.sightings == 0)
      #expect(counts.deliveries == 0)
      #expect(counts.publications == 1)
    }
  }

  @Test(.requires(.postgres), arguments: StorageKind.allCases)
  func badCredentialsAndReportsAreRefusedWithNothingApplied(_ kind: StorageKind) async throws {
    let storage = try await StorageFixture.make(kind)
    try await withShutdown(storage) { storage in
      let t0 = Date(timeIntervalSince1970: 1_800_000_000)
      let alice = try await Self.engine(storage) { try $0.register(project: "p", now: t0) }
      await #expect(throws: ResolverError.wrongSecret(alice.id)) {
        _ = try await Self.engine(storage) {
          try $0.report(Report(), from: DeviceCredentials(id: alice.id, secret: "x"), now: t0)
        }
      }
      let tooLong = Message(text: "x", type: String(repeating: "t", count: 33))
      await #expect(throws: ResolverError.self) {
        _ = try await Self.engine(storage) {
          try $0.report(
            Report(publish: [PublicationSpec(id: .random(), message: tooLong, strategy: .default)]),
            from: alice, now: t0)
        }
      }
      let counts = try await storage.transaction { try $0.resolution.counts() }
      #expect(counts.publications == 0)
    }
  }

  @Test(.requires(.postgres), arguments: StorageKind.allCases)
  func theEventLogReplaysFromASequenceAndIsPruned(_ kind: StorageKind) async throws {
    let storage = try await StorageFixture.make(kind)
    try await withShutdown(storage) { storage in
      let t0 = Date(timeIntervalSince1970: 1_800_000_000)
      let device = DeviceID.random()
      let subscription = SubscriptionID.random()
      let events = (1...5).map {
        DeviceEvent(
          device: device, sequence: UInt64($0),
          event: .found(subscription, Message(text: "m\($0)", type: "t")))
      }
      let (replay, pruned, left) = try await storage.transaction { store in
        try store.eventLog.appendEvents(Array(events.prefix(2)), at: t0)
        try store.eventLog.appendEvents(Array(events.suffix(3)), at: t0.addingTimeInterval(100))
        let replay = try store.eventLog.events(for: device, after: 1, limit: 3)
        let pruned = try store.eventLog.pruneEvents(before: t0.addingTimeInterval(50))
        return (replay, pruned, try store.eventLog.events(for: device, after: 0, limit: 100))
      }
      #expect(replay.map(\.sequence) == [2, 3, 4])
      #expect(replay.first?.event == events[1].event)
      #expect(pruned == 2)
      #expect(left.map(\.sequence) == [3, 4, 5])
    }
  }

  /// Whoever reads the database (a backup, the file) finds no device secret in it.
  @Test(.requires(.postgres), arguments: StorageKind.allCases)
  func deviceSecretsAreStoredAsDigests(_ kind: StorageKind) async throws {
    let storage = try await StorageFixture.make(kind)
    try await withShutdown(storage) { storage in
      let device = try await storage.register(
        project: "p", configuration: Self.configuration, now: Date())
      let stored = try await storage.read { store in
        try store.sql.query("SELECT secret FROM devices", []).map { try $0.text(0) }
      }
      #expect(stored == [DeviceRecord.digest(ofSecret: device.secret)])
      #expect(!stored.contains { $0.contains(device.secret) })
    }
  }

  @Test(.requires(.postgres), arguments: StorageKind.allCases)
  func apiKeysAreStoredHashedAndRevocable(_ kind: StorageKind) async throws {
    let storage = try await StorageFixture.make(kind)
    try await withShutdown(storage) { storage in
      let t0 = Date(timeIntervalSince1970: 1_800_000_000)
      let created = try await storage.transaction { store in
        try store.apiKeys.createAPIKey(project: "cafe", role: .admin, label: "kiosk", now: t0)
      }
      #expect(created.key.hasPrefix("nk_"))
      let (found, unknown, revoked, again, list) = try await storage.transaction { store in
        (
          try store.apiKeys.apiKey(created.key), try store.apiKeys.apiKey(created.key + "x"),
          try store.apiKeys.revokeAPIKey(id: created.record.id, now: t0),
          try store.apiKeys.revokeAPIKey(id: created.record.id, now: t0),
          try store.apiKeys.apiKeys(project: "cafe")
        )
      }
      #expect(found?.project == "cafe")
      #expect(found?.isRevoked == false)
      #expect(unknown == nil)
      #expect(revoked)
      #expect(!again)
      #expect(list.count == 1 && list[0].isRevoked)
    }
  }
}
