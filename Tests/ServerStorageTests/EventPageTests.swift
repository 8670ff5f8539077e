@_spi(Resolver) import Core
import ServerTestSupport
import Foundation
@_spi(Resolver) import Resolution
@_spi(Resolver) import ServerStorage
import Testing
import TestSupport

/// An event stream reads the log a page at a time, and a page holds at most a byte budget of
/// messages (plus one event), not a number of events of any size (issue 16).
@Suite("Event pages")
struct EventPageTests {
  @Test(.requires(.postgres), arguments: StorageKind.allCases)
  func aPageStopsAtItsByteBudget(_ kind: StorageKind) async throws {
    let storage = try await StorageFixture.make(kind)
    try await withShutdown(storage) { storage in
      let (device, subscription) = (DeviceID.random(), SubscriptionID.random())
      // Ten different messages of 100 KiB.
      let events = (1...10).map { index in
        DeviceEvent(
          device: device, sequence: UInt64(index),
          event: .found(
            subscription,
            Message(content: Data(repeating: UInt8(index), count: 100 * 1024), type: "t")))
      }
      let (all, budgeted, tiny, rest) = try await storage.transaction { [events] store in
        try store.eventLog.appendEvents(events, at: Date(timeIntervalSince1970: 1_800_000_000))
        return (
          try store.eventLog.events(for: device, after: 0, limit: 256),
          try store.eventLog.events(for: device, after: 0, limit: 256, byteBudget: 250 * 1024),
          try store.eventLog.events(for: device, after: 0, limit: 256, byteBudget: 1),
          try store.eventLog.events(for: device, after: 8, limit: 256, byteBudget: 250 * 1024)
        )
      }
      #expect(all.count == 10)
      // Under 250 KiB before each: the first three (the third goes past, as the last may).
      #expect(budgeted.map(\.sequence) == [1, 2, 3])
      #expect(budgeted == Array(all.prefix(3)))
      // However small the budget, a page has one event: the stream moves on.
      #expect(tiny.map(\.sequence) == [1])
      #expect(rest.map(\.sequence) == [9, 10])
    }
  }
}
