import TestSupport
import Core
import Foundation
import MediumTestKit
import Resolution
import Strategy
import Testing
import Tokens
import NearbyTesting

@Suite("MessageManager")
struct ManagerTests {
  @Test("publish and subscribe reject bad input with typed errors")
  func rejections() async throws {
    let device = try await ScriptedDevice(resolver: InProcessResolver())
    let manager = device.manager
    await #expect(throws: MessageError.contentTooLarge(bytes: 102_401, limit: 102_400)) {
      try await manager.publish(Message(content: Data(count: 102_401)))
    }
    await #expect(throws: MessageError.typeTooLong(bytes: 33, limit: 32)) {
      try await manager.subscribe(configure: { $0.type = String(repeating: "x", count: 33) })
    }
    await #expect(throws: MessageError.namespaceInvalidCharacter(" ")) {
      try await manager.subscribe(configure: { $0.namespace = "a b" })
    }
    await #expect(throws: StrategyError.backgroundRequiresBLEOnly(mediums: .default)) {
      try await manager.publish(Message(text: "bg")) { $0.strategy.allowInBackground = true }
    }
    await #expect(throws: StrategyError.earshotRequiresAudio(mediums: .ble)) {
      try await manager.subscribe(configure: {
        $0.strategy = Strategy(mediums: .ble, distanceType: .earshot)
      })
    }
    await #expect(throws: ManagerError.self) {
      try await manager.subscribe(configure: { $0.deviceTypes = .bleBeacons })
    }
    #expect(await manager.publicationCount == 0)
    #expect(await manager.subscriptionCount == 0)
    await manager.shutdown()
  }

  @Test("an empty API key is refused")
  func emptyKey() async throws {
    await #expect(throws: ManagerError.emptyAPIKey) {
      try await MessageManager(
        apiKey: "", configuration: .init(resolver: .inProcess(InProcessResolver())))
    }
  }

  @Test("status goes starting → active → inactive, as a value and as a stream")
  func status() async throws {
    let device = try await ScriptedDevice(resolver: InProcessResolver())
    let publication = try await device.manager.publish(Message(text: "x"))
    #expect(publication.status == .active)
    await publication.cancel()
    #expect(publication.status == .inactive)
    var seen: [HandleStatus] = []
    for await status in publication.statusUpdates { seen.append(status) }
    #expect(seen == [.starting, .active, .inactive])
    await publication.cancel()  // twice is fine
    await device.manager.shutdown()
  }

  @Test("mediums follow the resolver's directives")
  func directives() async throws {
    let device = try await ScriptedDevice(resolver: InProcessResolver())
    #expect(device.ble.transmittedToken == nil && !device.ble.isScanning)
    let publication = try await device.manager.publish(Message(text: "x")) {
      $0.strategy = Strategy(mediums: .ble, mode: .broadcast)
    }
    let token = try #require(await device.manager.currentToken)
    #expect(device.ble.transmittedToken == token)
    #expect(!device.ble.isScanning)
    #expect(device.audio.transmittedToken == nil && !device.audio.isScanning)
    let subscription = try await device.manager.subscribe(configure: {
      $0.strategy = Strategy(mediums: .audio, mode: .scan)
    })
    #expect(device.audio.isScanning)
    await publication.cancel()
    #expect(device.ble.transmittedToken == nil)
    await subscription.cancel()
    #expect(!device.audio.isScanning)
    await device.manager.shutdown()
  }

  @Test("found and lost reach handlers and the events stream; releasing a publication loses it")
  func foundAndLost() async throws {
    let resolver = try InProcessResolver()
    let alice = try await ScriptedDevice(resolver: resolver)
    let bob = try await ScriptedDevice(resolver: resolver)
    let found = Calls<Message>()
    let lost = Calls<Message>()
    var publication: Publication? = try await alice.manager.publish(
      Message(text: "Alice", type: "name"))
    let subscription = try await bob.manager.subscribe(
      onFound: { found.append($0) }, onLost: { lost.append($0) }, configure: { $0.type = "name" })
    let aliceToken = try #require(await alice.manager.currentToken)
    #expect(bob.ble.hear(aliceToken))
    var events = subscription.events.makeAsyncIterator()
    #expect(await events.next() == .found(Message(text: "Alice", type: "name")))
    #expect(found.all == [Message(text: "Alice", type: "name")])
    #expect(publication?.status == .active)
    publication = nil  // released: unpublished
    #expect(await events.next() == .lost(Message(text: "Alice", type: "name")))
    #expect(lost.all == [Message(text: "Alice", type: "name")])
    #expect(await eventually { await alice.manager.publicationCount == 0 })
    #expect(await resolver.counts().publications == 0)
    await alice.manager.shutdown()
    await bob.manager.shutdown()
  }

  @Test("releasing a subscription unsubscribes and finishes its stream")
  func releaseSubscription() async throws {
    let resolver = try InProcessResolver()
    let device = try await ScriptedDevice(resolver: resolver)
    var subscription: Subscription? = try await device.manager.subscribe()
    // The status stream, unlike `events`, does not keep the subscription alive.
    let statuses = StreamRecorder(try #require(subscription?.statusUpdates))
    #expect(await resolver.counts().subscriptions == 1)
    subscription = nil
    #expect(await statuses.waitUntilFinished())
    #expect(statuses.elements.last == .inactive)
    #expect(await eventually { await resolver.counts().subscriptions == 0 })
    await device.manager.shutdown()
  }

  @Test("TTL expiry: the subscription gets expired and stops; the publication goes inactive")
  func expiry() async throws {
    let device = try await ScriptedDevice(resolver: InProcessResolver())
    let expiredSubscriptions = Calls<Bool>()
    let expiredPublications = Calls<Bool>()
    let subscription = try await device.manager.subscribe(configure: {
      $0.strategy.ttl = try TTL(seconds: 0.2)
      $0.expiredHandler = { expiredSubscriptions.append(true) }
    })
    let publication = try await device.manager.publish(Message(text: "x")) {
      $0.strategy.ttl = try TTL(seconds: 0.2)
      $0.expiredHandler = { expiredPublications.append(true) }
    }
    var events: [SubscriptionEvent] = []
    for await event in subscription.events { events.append(event) }
    #expect(events == [.expired])
    #expect(subscription.status == .inactive)
    #expect(expiredSubscriptions.all == [true])
    #expect(await eventually { publication.status == .inactive })
    #expect(expiredPublications.all == [true])
    await device.manager.shutdown()
  }

  @Test("the token rotates when the resolver says so, and the medium transmits the new one")
  func rotation() async throws {
    let resolver = try InProcessResolver(configuration: .init(tokenLifetime: .milliseconds(300)))
    let device = try await ScriptedDevice(resolver: resolver)
    let publication = try await device.manager.publish(Message(text: "x"))
    let first = try #require(await device.manager.currentToken)
    #expect(await eventually(timeout: .seconds(30)) { await device.manager.currentToken != first })
    let second = try #require(await device.manager.currentToken)
    #expect(await device.ble.until { device.ble.transmittedToken == second })
    await publication.cancel()
    await device.manager.shutdown()
  }

  @Test("after shutdown, publish throws and the device is gone from the resolver")
  func shutdown() async throws {
    let resolver = try InProcessResolver()
    let device = try await ScriptedDevice(resolver: resolver)
    let subscription = try await device.manager.subscribe()
    await device.manager.shutdown()
    #expect(subscription.status == .inactive)
    await #expect(throws: ManagerError.shutDown) {
      try await device.manager.publish(Message(text: "late"))
    }
    #expect(await resolver.counts().devices == 0)
  }

  @Test("a manager released without shutdown still stops its mediums and unregisters")
  func releasedWithoutShutdown() async throws {
    let resolver = try InProcessResolver()
    let ble = ScriptedMedium(kind: .ble)
    var manager: MessageManager? = try await MessageManager(
      apiKey: "test",
      configuration: .init(resolver: .inProcess(resolver), mediums: [.scripted(ble)]))
    _ = try await manager?.publish(Message(text: "hi"))
    #expect(await ble.until { ble.transmittedToken != nil })
    #expect(await resolver.counts().devices == 1)
    manager = nil
    // Nothing awaits the teardown of a released manager: wait for what it does.
    #expect(await eventually { await resolver.counts().devices == 0 })
    #expect(ble.transmittedToken == nil)
  }
}
