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

/// On SQLite a report handles due deadlines itself, and skips looking when the storage knows
/// none is due yet.
@Suite("Deadline hint (SQLite)")
struct DeadlineHintTests {
  @Test func reportsSkipTheDeadlineLookupUntilOneIsDueThenHandleIt() async throws {
    let storage = try await StorageFixture.make(.sqlite)
    try await withShutdown(storage) { storage in
      let configuration = EngineOnStorageTests.configuration  // lost after 10 s
      let t0 = Date(timeIntervalSince1970: 1_800_000_000)
      let alice = try await storage.register(project: "p", configuration: configuration, now: t0)
      let bob = try await storage.register(project: "p", configuration: configuration, now: t0)
      let subscription = SubscriptionID.random()
      let message = Message(text: "Alice", type: "name")
      let aliceToken = try await storage.report(
        Report(publish: [PublicationSpec(id: .random(), message: message, strategy: .default)]),
        from: alice, configuration: configuration, now: t0
      ).answer.directives.token
      _ = try await storage.report(
        Report(subscribe: [SubscriptionSpec(id: subscription, type: "name")]), from: bob,
        configuration: configuration, now: t0)
      let heardAt = t0.addingTimeInterval(1)
      let found = try await storage.report(
        Report(sightings: [Sighting(token: aliceToken, medium: .ble, time: heardAt)]), from: bob,
        configuration: configuration, now: heardAt
      ).answer.events
      #expect(found == [SequencedEvent(sequence: 1, event: .found(subscription, message))])

      // A report while nothing is due learns when the next deadline is: the sighting's.
      _ = try await storage.report(
        Report(), from: alice, configuration: configuration, now: t0.addingTimeInterval(2))
      let hint = try await storage.transaction { $0.deadlineHint?.earliest }
      #expect(hint == heardAt.addingTimeInterval(10))
      let early = try await storage.transaction {
        $0.deadlinesMayBeDue(at: t0.addingTimeInterval(5))
      }
      #expect(!early)

      // Once it is due, a report (no sweeper runs here) handles it: bob loses Alice.
      let later = heardAt.addingTimeInterval(11)
      _ = try await storage.report(Report(), from: alice, configuration: configuration, now: later)
      let log = try await storage.read { try $0.eventLog.events(for: bob.id, after: 0, limit: 10) }
      #expect(log.map(\.event) == [.found(subscription, message), .lost(subscription, message)])
    }
  }
}
