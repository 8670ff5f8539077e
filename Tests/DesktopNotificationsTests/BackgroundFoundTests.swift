import TestSupport
import BackgroundPersistence
import Core
import DesktopNotifications
import Foundation
import MediumTestKit
import PermissionStore
import Resolution
import Strategy
import Testing
import NearbyTesting

/// The path nearby-restore takes for a message found in background, in one process: a
/// restored background subscription finds a publication on the in-memory air, and the
/// notification reaches the server double on the private session bus.
@Suite("Found in background")
struct BackgroundFoundTests {
  @Test(
    "a background subscription's found message raises a desktop notification",
    .requires(.dbus, .notifications))
  func foundRaisesNotification() async throws {
    let double = try await NotificationDouble.connect()
    let folder = FileManager.default.temporaryDirectory
      .appendingPathComponent("nearby-notify-\(UUID().uuidString)")
    defer { try? FileManager.default.removeItem(at: folder) }
    let air = Air()
    await air.place("alice", at: Air.Position(x: 0))
    await air.place("bob", at: Air.Position(x: 1))
    let resolver = try InProcessResolver()
    func manager(_ name: String) async throws -> MessageManager {
      try await MessageManager(
        apiKey: "k",
        configuration: .init(
          resolver: .inProcess(resolver), mediums: MediumProvider.air(air, device: name)))
    }

    let store = try await DefaultsStore(appID: "com.example.notify", directory: folder)
    defer { store.close() }
    let background = BackgroundPersistence(store: store)
    try await background.setEnabled(true)
    let tag = String(UUID().uuidString.prefix(8)).lowercased()
    _ = try await background.add(
      BackgroundSubscription(namespace: "shop\(tag)", type: "offer", strategy: .bleOnly))

    let notifier = DesktopNotifier(bus: .address(double.address))
    let (found, continuation) = AsyncStream.makeStream(
      of: Message.self, bufferingPolicy: .bufferingNewest(64))
    let delivery = Task {
      for await message in found {
        await notifier.notify(DesktopNotification(found: message, appName: "com.example.notify"))
      }
    }
    let bob = try await manager("bob")
    await bob.setAppState(.background)
    let restored = await background.restore(into: bob) { _, message in
      continuation.yield(message)
    }
    #expect(restored.subscriptions.count == 1)

    let alice = try await manager("alice")
    let publication = try await alice.publish(
      Message(text: "10% off", type: "offer", namespace: "shop\(tag)")
    ) { $0.strategy = .bleOnly }
    let expected = NotificationDouble.Call(
      appName: "com.example.notify", summary: "Nearby message found: shop\(tag)/offer",
      body: "10% off")
    #expect(
      await eventually(timeout: .seconds(30)) {
        (try? await double.notifyCalls().contains(expected)) == true
      })
    _ = publication
    continuation.finish()
    await delivery.value
    await notifier.close()
    await alice.shutdown()
    await bob.shutdown()
  }
}
