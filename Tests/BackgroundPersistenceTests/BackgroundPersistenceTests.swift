import TestSupport
import BackgroundPersistence
import Core
import Foundation
import MediumTestKit
import PermissionStore
import Resolution
import Strategy
import Testing
import Tokens
import NearbyTesting
import BeaconFrames

@Suite("BackgroundPersistence")
struct BackgroundPersistenceTests {
  final class Found: Sendable {
    let items = Watched<[(String, Message)]>([])
    var all: [(String, Message)] { items.value }
  }

  struct Folder {
    let url = FileManager.default.temporaryDirectory
      .appendingPathComponent("nearby-background-\(UUID().uuidString)")
    func remove() { try? FileManager.default.removeItem(at: url) }
  }

  static func manager(
    _ name: String, air: Air, resolver: InProcessResolver
  ) async throws -> MessageManager {
    try await MessageManager(
      apiKey: "k",
      configuration: .init(
        resolver: .inProcess(resolver), mediums: MediumProvider.air(air, device: name)))
  }

  @Test("background subscriptions come back after a restart and find a publication on the air")
  func restoreAfterRestart() async throws {
    let folder = Folder()
    defer { folder.remove() }
    let air = Air()
    await air.place("alice", at: Air.Position(x: 0))
    await air.place("bob", at: Air.Position(x: 1))
    let resolver = try InProcessResolver()
    let offer = BackgroundSubscription(namespace: "shop", type: "offer", strategy: .bleOnly)

    // First run of the app: it records a background subscription, then exits.
    do {
      let store = try await DefaultsStore(appID: "com.example.bob", directory: folder.url)
      let background = BackgroundPersistence(store: store)
      try await background.setEnabled(true)
      let bob = try await Self.manager("bob", air: air, resolver: resolver)
      let subscription = try await background.subscribe(offer, on: bob)
      #expect(subscription.status == .active)
      await bob.shutdown()
      store.close()
    }

    // The next start (or nearby-restore): a new store on the same file and a new manager.
    let store = try await DefaultsStore(appID: "com.example.bob", directory: folder.url)
    let background = BackgroundPersistence(store: store)
    #expect(background.isEnabled)
    #expect(background.subscriptions.map(\.id) == [offer.id])
    #expect(background.subscriptions.first?.strategy.allowInBackground == true)
    let bob = try await Self.manager("bob", air: air, resolver: resolver)
    await bob.setAppState(.background)
    let found = Found()
    let restored = await background.restore(into: bob) { descriptor, message in
      found.items.withLock { $0.append((descriptor.id, message)) }
    }
    #expect(restored.subscriptions.count == 1)
    #expect(restored.failures.isEmpty)
    let subscription = try #require(restored.subscriptions[offer.id])
    #expect(subscription.status == .active)

    let alice = try await Self.manager("alice", air: air, resolver: resolver)
    let message = Message(text: "10% off", type: "offer", namespace: "shop")
    let publication = try await alice.publish(message) { $0.strategy = .bleOnly }
    #expect(
      await found.items.until { items in items.contains { $0.0 == offer.id && $0.1 == message } })
    _ = publication
    await alice.shutdown()
    await bob.shutdown()
  }

  @Test(
    "a background beacon subscription is restored and finds a beacon's attachment in background")
  func restoreBeaconSubscription() async throws {
    let folder = Folder()
    defer { folder.remove() }
    let air = Air()
    let resolver = try InProcessResolver()
    let uid = try EddystoneUID(
      namespace: BeaconBytes(hex: "edd1ebeac04e5defa017"),
      instance: BeaconBytes(hex: "000000000001"),
      txPower: -20)
    let attachment = BeaconAttachment(
      name: "a1", namespace: "shop", type: "offer", data: Data("2 for 1".utf8))
    try await resolver.registerBeacon(
      apiKey: "k", id: BeaconID(frame: .eddystoneUID(uid))!, attachments: [attachment])
    let store = try await DefaultsStore(appID: "com.example.shop", directory: folder.url)
    let background = BackgroundPersistence(store: store)
    try await background.setEnabled(true)
    let recorded = try await background.add(
      BackgroundSubscription(
        namespace: "shop", strategy: .bleOnly,
        beaconStrategy: BeaconStrategy(includeIBeacons: false)))
    #expect(recorded.beaconStrategy?.allowInBackground == true)

    // The next start: a new store on the same file, a manager in background.
    let reopened = BackgroundPersistence(
      store: try await DefaultsStore(appID: "com.example.shop", directory: folder.url))
    #expect(reopened.subscriptions.first?.beaconStrategy?.includeIBeacons == false)
    let manager = try await Self.manager("phone", air: air, resolver: resolver)
    await manager.setAppState(.background)
    let found = Found()
    let restored = await reopened.restore(into: manager) { descriptor, message in
      found.items.withLock { $0.append((descriptor.id, message)) }
    }
    #expect(restored.failures.isEmpty)
    #expect(try #require(restored.subscriptions[recorded.id]).status == .active)
    await air.placeBeacon("shelf", frames: [.eddystoneUID(uid)], at: Air.Position(x: 2))
    #expect(
      await found.items.until { items in
        items.contains { $0.0 == recorded.id && $0.1 == attachment.message }
      })
    await manager.shutdown()
  }

  @Test("background requests that are not BLE-only are rejected and not recorded")
  func rejectsNonBLE() async throws {
    let folder = Folder()
    defer { folder.remove() }
    let background = BackgroundPersistence(
      store: try await DefaultsStore(appID: "app", directory: folder.url))
    await #expect(throws: StrategyError.backgroundRequiresBLEOnly(mediums: .default)) {
      try await background.add(BackgroundSubscription(strategy: .default))
    }
    await #expect(throws: StrategyError.backgroundRequiresBLEOnly(mediums: .audio)) {
      try await background.add(
        BackgroundPublication(message: Message(text: "x"), strategy: Strategy(mediums: .audio)))
    }
    #expect(background.subscriptions.isEmpty && background.publications.isEmpty)
  }

  @Test("restore does nothing while background mode is off")
  func modeOff() async throws {
    let folder = Folder()
    defer { folder.remove() }
    let background = BackgroundPersistence(
      store: try await DefaultsStore(appID: "app", directory: folder.url))
    try await background.add(BackgroundPublication(message: Message(text: "x"), strategy: .bleOnly))
    let manager = try await MessageManager(
      apiKey: "k",
      configuration: .init(
        resolver: .inProcess(try InProcessResolver()),
        mediums: [.scripted(ScriptedMedium(kind: .ble))]))
    let restored = await background.restore(into: manager)
    #expect(restored.publications.isEmpty)
    #expect(await manager.publicationCount == 0)
    try await background.setEnabled(true)
    #expect(await background.restore(into: manager).publications.count == 1)
    await manager.shutdown()
  }

  @Test("a finite TTL continues across restarts; ran-out descriptors are removed")
  func ttlAcrossRestarts() async throws {
    let folder = Folder()
    defer { folder.remove() }
    let background = BackgroundPersistence(
      store: try await DefaultsStore(appID: "app", directory: folder.url))
    try await background.setEnabled(true)
    let now = Date()
    var strategy = Strategy.bleOnly
    strategy.ttl = try TTL(seconds: 300)
    let old = try await background.add(
      BackgroundPublication(
        message: Message(text: "old"), strategy: strategy, createdAt: now.addingTimeInterval(-400)))
    let recent = try await background.add(
      BackgroundPublication(
        message: Message(text: "recent"), strategy: strategy,
        createdAt: now.addingTimeInterval(-100)))
    let manager = try await MessageManager(
      apiKey: "k",
      configuration: .init(
        resolver: .inProcess(try InProcessResolver()),
        mediums: [.scripted(ScriptedMedium(kind: .ble))]))
    let restored = await background.restore(into: manager, now: now)
    #expect(restored.expired == [old.id])
    let publication = try #require(restored.publications[recent.id])
    let left = try #require(publication.strategy.ttl.seconds)
    #expect(abs(left - 200) < 1)
    #expect(background.publications.map(\.id) == [recent.id])
    #expect(try await background.remove(id: recent.id))
    #expect(background.publications.isEmpty)
    await manager.shutdown()
  }

  @Test("the keeper starts, restarts and stops handles as the store changes")
  func keeperFollowsChanges() async throws {
    let folder = Folder()
    defer { folder.remove() }
    let background = BackgroundPersistence(
      store: try await DefaultsStore(appID: "app", directory: folder.url))
    let manager = try await MessageManager(
      apiKey: "k",
      configuration: .init(
        resolver: .inProcess(try InProcessResolver()),
        mediums: [.scripted(ScriptedMedium(kind: .ble))]))
    let keeper = BackgroundKeeper(persistence: background, manager: manager)
    let following = Task { await keeper.follow() }
    defer { following.cancel() }
    // A change made before the keeper listens would not reach it: wait until it does.
    #expect(await eventually { background.store.eventStreamCount == 1 })

    let first = try await background.add(BackgroundSubscription(namespace: "a", strategy: .bleOnly))
    #expect(await keeper.subscriptionHandles.isEmpty)  // mode off
    try await background.setEnabled(true)
    #expect(await eventually { await keeper.subscriptionHandles.keys.sorted() == [first.id] })
    let handle = try #require(await keeper.subscriptionHandles[first.id])

    var changed = first
    changed.namespace = "b"
    try await background.add(changed)
    #expect(
      await eventually {
        await keeper.subscriptionHandles[first.id].map { $0 !== handle } == true
      })
    #expect(handle.status == .inactive)
    #expect(await manager.subscriptionCount == 1)

    try await background.setEnabled(false)
    #expect(await eventually { await keeper.subscriptionHandles.isEmpty })
    #expect(await eventually { await manager.subscriptionCount == 0 })
    await manager.shutdown()
  }
}
