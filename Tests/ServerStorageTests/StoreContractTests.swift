import Core
import Foundation
import Resolution
import ServerStorage
import Strategy
import ServerTestSupport
import Testing
import TestSupport
import Tokens

/// What every `ResolutionStore` promises the engine, checked on the SQL store over each
/// database (the in-memory store is checked by the engine tests in ResolutionTests).
@Suite("SQL store contract")
struct StoreContractTests {
  let t0 = Date(timeIntervalSince1970: 1_800_000_000)

  func device(_ project: String = "p") -> DeviceRecord {
    DeviceRecord(
      id: .random(), project: project, secretDigest: "s3cret", token: .random(),
      tokenExpiresAt: t0.addingTimeInterval(900))
  }

  @Test(.requires(.postgres), arguments: StorageKind.allCases)
  func devicesRoundTripAndUpdate(_ kind: StorageKind) async throws {
    let storage = try await StorageFixture.make(kind)
    try await withShutdown(storage) { storage in
      var record = device()
      record.usage.apply(Strategy(mediums: .ble, mode: .broadcast), sign: 1)
      record.revision = UInt64.max - 1
      record.lastEventSequence = 7
      let saved = record
      let loaded = try await storage.transaction { store in
        try store.resolution.devices.saveDevice(saved)
        return try store.resolution.devices.device(saved.id)
      }
      #expect(loaded == record)
      record.revision = 3
      let updated = record
      let (again, count) = try await storage.transaction { store in
        try store.resolution.devices.saveDevice(updated)
        return (
          try store.resolution.devices.device(updated.id), try store.resolution.counts().devices
        )
      }
      #expect(again?.revision == 3)
      #expect(count == 1)
      let gone = try await storage.transaction { store in
        try store.resolution.devices.removeDevice(updated.id)
        return try store.resolution.devices.device(updated.id)
      }
      #expect(gone == nil)
    }
  }

  @Test(.requires(.postgres), arguments: StorageKind.allCases)
  func tokensResolveUntilTheirBindingRunsOut(_ kind: StorageKind) async throws {
    let storage = try await StorageFixture.make(kind)
    try await withShutdown(storage) { storage in
      let token = Token(value: 0xFEDC_BA98_7654_3210)  // high bit set: stored as a negative Int64
      let owner = DeviceID.random()
      let t0 = self.t0
      let (before, after, binding, unbound) = try await storage.transaction { store in
        try store.resolution.devices.bind(token, to: owner, until: t0.addingTimeInterval(60))
        let before = try store.resolution.devices.device(
          heard: token, at: t0.addingTimeInterval(59))
        let after = try store.resolution.devices.device(heard: token, at: t0.addingTimeInterval(60))
        let binding = try store.resolution.devices.binding(of: token)
        try store.resolution.devices.unbind(token)
        return (before, after, binding, try store.resolution.devices.binding(of: token))
      }
      #expect(before == owner)
      #expect(after == nil)
      #expect(binding == t0.addingTimeInterval(60))
      #expect(unbound == nil)
    }
  }

  @Test(.requires(.postgres), arguments: StorageKind.allCases)
  func handlesAreFoundByDeviceAndFilters(_ kind: StorageKind) async throws {
    let storage = try await StorageFixture.make(kind)
    try await withShutdown(storage) { storage in
      let a = DeviceID.random()
      let b = DeviceID.random()
      let menu = PublicationRecord(
        id: .random(), device: a, project: "p",
        message: Message(content: Data([0, 1, 2, 255]), type: "menu", namespace: "cafe"),
        strategy: Strategy(mediums: .audio, mode: .scan, ttl: .infinite), expiresAt: nil)
      let other = PublicationRecord(
        id: .random(), device: a, project: "p", message: Message(text: "x", type: "ad"),
        strategy: .default, expiresAt: t0.addingTimeInterval(300))
      let anyType = SubscriptionRecord(
        id: .random(), device: b, project: "p", namespace: "cafe", type: nil, strategy: .default,
        deviceTypes: .nearbyDevices, expiresAt: nil)
      let menusOnly = SubscriptionRecord(
        id: .random(), device: b, project: "p", namespace: "cafe", type: "menu",
        strategy: Strategy(mediums: .ble), deviceTypes: .nearbyDevices,
        expiresAt: t0.addingTimeInterval(10))
      let result = try await storage.transaction { store in
        for record in [menu, other] { try store.resolution.handles.savePublication(record) }
        for record in [anyType, menusOnly] { try store.resolution.handles.saveSubscription(record) }
        return (
          loaded: try store.resolution.handles.publication(menu.id),
          onA: try store.resolution.handles.publications(on: a).count,
          idsOnA: Set(try store.resolution.handles.publicationIDs(on: a)),
          subscriptionIDsOnB: Set(try store.resolution.handles.subscriptionIDs(on: b)),
          tallyOnA: try store.resolution.handles.publicationTally(
            on: a, among: [menu.id, .random()]),
          subscriptionTallyOnB: try store.resolution.handles.subscriptionTally(
            on: b, among: [menusOnly.id]),
          acceptedByMenus: try store.resolution.handles.publications(on: a, acceptedBy: menusOnly)
            .map(
              \.id),
          acceptedByAny: try store.resolution.handles.publications(on: a, acceptedBy: anyType).map(
            \.id),
          accepting: Set(
            try store.resolution.handles.subscriptions(on: b, accepting: menu).map(\.id)),
          acceptingOther: try store.resolution.handles.subscriptions(on: b, accepting: other).map(
            \.id),
          subscription: try store.resolution.handles.subscription(menusOnly.id),
          removed: try store.resolution.handles.removePublication(other.id),
          left: try store.resolution.handles.publications(on: a).map(\.id)
        )
      }
      #expect(result.loaded == menu)
      #expect(result.onA == 2)
      #expect(result.idsOnA == [menu.id, other.id])
      #expect(result.subscriptionIDsOnB == [anyType.id, menusOnly.id])
      #expect(result.tallyOnA == HandleTally(count: 2, present: [menu.id]))
      #expect(result.subscriptionTallyOnB == HandleTally(count: 2, present: [menusOnly.id]))
      #expect(result.acceptedByMenus == [menu.id])
      #expect(result.acceptedByAny == [menu.id])
      #expect(result.accepting == [anyType.id, menusOnly.id])
      #expect(result.acceptingOther.isEmpty)
      #expect(result.subscription == menusOnly)
      #expect(result.removed == other)
      #expect(result.left == [menu.id])
    }
  }

  @Test(.requires(.postgres), arguments: StorageKind.allCases)
  func sightingsRememberThePreviousTimeAndBothDirections(_ kind: StorageKind) async throws {
    let storage = try await StorageFixture.make(kind)
    try await withShutdown(storage) { storage in
      let (a, b, c) = (DeviceID.random(), DeviceID.random(), DeviceID.random())
      let t0 = self.t0
      let result = try await storage.transaction { store in
        let key = ProximityKey(hearer: a, heard: b, medium: .ble)
        let first = try store.resolution.proximity.recordSighting(key, at: t0)
        let second = try store.resolution.proximity.recordSighting(
          key, at: t0.addingTimeInterval(2))
        _ = try store.resolution.proximity.recordSighting(
          ProximityKey(hearer: c, heard: a, medium: .audio), at: t0)
        let neighbors = Set(try store.resolution.proximity.neighbors(of: a))
        try store.resolution.proximity.removeSighting(key)
        return (
          first, second, neighbors, try store.resolution.proximity.lastSighting(key),
          try store.resolution.proximity.neighbors(of: b)
        )
      }
      #expect(result.0 == nil)
      #expect(result.1 == t0)
      #expect(result.2 == [b, c])
      #expect(result.3 == nil)
      #expect(result.4.isEmpty)
    }
  }

  @Test(.requires(.postgres), arguments: StorageKind.allCases)
  func aMessageIsFoundOnceAndLostWithItsLastPublication(_ kind: StorageKind) async throws {
    let storage = try await StorageFixture.make(kind)
    try await withShutdown(storage) { storage in
      let message = Message(text: "same", type: "t")
      let first = PublicationRecord(
        id: .random(), device: .random(), project: "p", message: message, strategy: .default,
        expiresAt: nil)
      let second = PublicationRecord(
        id: .random(), device: .random(), project: "p", message: message, strategy: .default,
        expiresAt: nil)
      let subscription = SubscriptionID.random()
      let steps = try await storage.transaction { store in
        try store.resolution.handles.savePublication(first)
        try store.resolution.handles.savePublication(second)
        return [
          try store.resolution.deliveries.addDelivery(
            subscription: subscription, publication: first.id, message: first.key),
          try store.resolution.deliveries.addDelivery(
            subscription: subscription, publication: second.id, message: second.key),
          try store.resolution.deliveries.addDelivery(
            subscription: subscription, publication: first.id, message: first.key),
          try store.resolution.deliveries.isDelivered(
            subscription: subscription, publication: second.id),
          try store.resolution.deliveries.deliveries(of: first.id) == [subscription],
          Set(try store.resolution.deliveries.deliveries(to: subscription).map(\.0)) == [
            first.id, second.id,
          ],
          try store.resolution.deliveries.removeDelivery(
            subscription: subscription, publication: first.id, message: first.key),
          try store.resolution.deliveries.removeDelivery(
            subscription: subscription, publication: first.id, message: first.key),
          try store.resolution.deliveries.removeDelivery(
            subscription: subscription, publication: second.id, message: second.key),
        ]
      }
      // found, not again for the second publication, not twice for one; lost only at the last.
      #expect(steps == [true, false, false, true, true, true, false, false, true])
    }
  }

  @Test(.requires(.postgres), arguments: StorageKind.allCases)
  func deadlinesPopInTimeOrder(_ kind: StorageKind) async throws {
    let storage = try await StorageFixture.make(kind)
    try await withShutdown(storage) { storage in
      let t0 = self.t0
      let key = ProximityKey(hearer: .random(), heard: .random(), medium: .audio)
      let kinds: [DeadlineKind] = [
        .tokenRetirement(Token(value: UInt64.max)), .proximity(key),
        .publicationExpiry(.random()), .subscriptionExpiry(.random()),
      ]
      let (next, popped, rest) = try await storage.transaction { store in
        for (offset, kind) in kinds.enumerated().reversed() {
          try store.resolution.deadlines.schedule(
            Deadline(at: t0.addingTimeInterval(Double(offset)), kind: kind))
        }
        let next = try store.resolution.deadlines.nextDeadline()
        var popped: [DeadlineKind] = []
        while let deadline = try store.resolution.deadlines.popDeadline(
          dueAt: t0.addingTimeInterval(2))
        {
          popped.append(deadline.kind)
        }
        return (next, popped, try store.resolution.counts().deadlines)
      }
      #expect(next == t0)
      #expect(popped == Array(kinds.prefix(3)))
      #expect(rest == 1)
    }
  }

  @Test(.requires(.postgres), arguments: StorageKind.allCases)
  func aFailedTransactionLeavesNothingBehind(_ kind: StorageKind) async throws {
    let storage = try await StorageFixture.make(kind)
    try await withShutdown(storage) { storage in
      let record = device()
      await #expect(throws: FixtureError.self) {
        try await storage.transaction { store in
          try store.resolution.devices.saveDevice(record)
          throw FixtureError("abandon")
        }
      }
      let loaded = try await storage.transaction { store in
        try store.resolution.devices.device(record.id)
      }
      #expect(loaded == nil)
    }
  }
}

@Suite("Usage text")
struct UsageTextTests {
  @Test(.requires(.postgres), arguments: StorageKind.allCases)
  func usageSurvivesTheDatabaseAndOldJSONStillReads(_ kind: StorageKind) async throws {
    let storage = try await StorageFixture.make(kind)
    try await withShutdown(storage) { storage in
      var record = DeviceRecord(
        id: .random(), project: "p", secretDigest: "s", token: .random(), tokenExpiresAt: Date())
      record.usage.apply(Strategy(mediums: [.ble, .audio], mode: .broadcast), sign: 1)
      record.usage.apply(Strategy(mediums: .audio, mode: .scan), sign: 1)
      let saved = record
      let id = record.id
      let (fresh, old) = try await storage.transaction { store in
        try store.resolution.devices.saveDevice(saved)
        let fresh = try SQLTransaction(store.sql).resolution.devices.device(id)
        try store.sql.execute(
          "UPDATE devices SET usage = ? WHERE id = ?",
          [.text(#"{"broadcastCounts":[1,1,2,1],"scanCounts":[2,1]}"#), .text(id.description)])
        return (fresh, try SQLTransaction(store.sql).resolution.devices.device(id))
      }
      #expect(fresh?.usage == record.usage)
      #expect(old?.usage == record.usage)
    }
  }
}
