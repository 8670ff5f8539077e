import TestSupport
import Core
import Foundation
import MediumTestKit
import Resolution
import Strategy
import Testing
import NearbyTesting

@Suite("MessageManager: app state")
struct AppStateTests {
  @Test("in background only BLE background handles run; the rest pause and resume")
  func backgroundPausesForegroundWork() async throws {
    let device = try await ScriptedDevice(resolver: InProcessResolver())
    let manager = device.manager
    let foreground = try await manager.publish(Message(text: "fg")) {
      $0.strategy = Strategy(mediums: .audio)
    }
    let background = try await manager.subscribe(configure: {
      $0.strategy = Strategy(mediums: .ble, allowInBackground: true)
    })
    #expect(await device.audio.until { device.audio.transmittedToken != nil })

    await manager.setAppState(.background)
    #expect(await manager.currentAppState == .background)
    #expect(foreground.status == .paused)
    #expect(background.status == .active)
    #expect(
      await device.audio.until {
        device.audio.transmittedToken == nil && !device.audio.isScanning
      })
    #expect(device.ble.isScanning)

    // Made while in background: a foreground-only handle starts paused.
    let later = try await manager.subscribe(configure: { $0.strategy = Strategy(mediums: .audio) })
    #expect(later.status == .paused)

    await manager.setAppState(.foreground)
    #expect(foreground.status == .active)
    #expect(later.status == .active)
    #expect(
      await device.audio.until {
        device.audio.transmittedToken != nil && device.audio.isScanning
      })
    await manager.shutdown()
  }

  @Test("a paused subscription finds again after resuming")
  func resumedSubscriptionFinds() async throws {
    let resolver = try InProcessResolver()
    let air = Air()
    await air.place("alice", at: Air.Position(x: 0))
    await air.place("bob", at: Air.Position(x: 1))
    let alice = try await MessageManager(
      apiKey: "k",
      configuration: .init(
        resolver: .inProcess(resolver), mediums: MediumProvider.air(air, device: "alice")))
    let bob = try await MessageManager(
      apiKey: "k",
      configuration: .init(
        resolver: .inProcess(resolver), mediums: MediumProvider.air(air, device: "bob")))
    let found = Calls<Message>()
    let subscription = try await bob.subscribe(onFound: { found.append($0) }, configure: { _ in })
    await bob.setAppState(.background)
    let publication = try await alice.publish(Message(text: "hello"))
    // Paused, the subscription is withdrawn from the resolver (the report is awaited), so
    // nothing can match it: the resolver holds alice's publication and no subscription.
    let counts = await resolver.counts()
    #expect(counts.subscriptions == 0 && counts.publications == 1)
    #expect(found.all.isEmpty)
    await bob.setAppState(.foreground)
    #expect(await found.until { $0.contains(Message(text: "hello")) })
    _ = (subscription, publication)
    await alice.shutdown()
    await bob.shutdown()
  }
}
