import TestSupport
import Core
import MediumTestKit
import Resolution
import Strategy
import Testing
import NearbyTesting

/// The seed's scenarios, on the in-memory air with real managers and the in-process resolver.
@Suite("Seed scenarios on the air")
struct SeedScenarioTests {
  @Test("a published name is found; releasing the publication makes it lost")
  func publishedNameFoundThenLost() async throws {
    let world = try AirWorld()
    let alice = try await world.device("Alice")
    let bob = try await world.device("Bob", at: 2)
    var publication: Publication? = try await alice.publish(Message(text: "Alice", type: "name"))
    let subscription = try await world.subscribe(bob, as: "Bob")
    #expect(await world.until { world.found(by: "Bob") == ["Alice"] })
    #expect(publication?.status == .active)
    publication = nil
    #expect(await world.until { world.lost(by: "Bob") == ["Alice"] })
    await subscription.cancel()
    await alice.shutdown()
    await bob.shutdown()
  }

  @Test("set-top box: scans-audio publication reaches broadcasts-audio subscriber, not scan-only")
  func setTopBox() async throws {
    let world = try AirWorld()
    let phone = try await world.device("Phone")
    let box = try await world.device("Box", at: 1)
    let speaker = try await world.device("Speaker", at: 1.5)
    let boxSubscription = try await world.subscribe(box, as: "Box") {
      $0.strategy = Strategy(mediums: .audio, mode: .broadcast)
    }
    let speakerSubscription = try await world.subscribe(speaker, as: "Speaker") {
      $0.strategy = Strategy(mediums: .audio, mode: .scan)
    }
    let publication = try await phone.publish(Message(text: "Play", type: "cast")) {
      $0.strategy = Strategy(mediums: .audio, mode: .scan)
    }
    #expect(await world.until { world.found(by: "Box") == ["Play"] })
    // Give the speaker many advertising rounds; it must hear nothing. A second subscription
    // like its first lives 0.6 s (a dozen rounds) and ends with an expiry the resolver numbers
    // after everything it sent the speaker before: once that is delivered, so is any found.
    let watch = try await world.subscribe(speaker, as: "Speaker") {
      $0.strategy = Strategy(mediums: .audio, mode: .scan)
      $0.strategy.ttl = try TTL(seconds: 0.6)
    }
    let watched = StreamRecorder(watch.events)
    #expect(await watched.first { $0 == .expired } != nil)
    #expect(watched.elements == [.expired])
    #expect(world.found(by: "Speaker").isEmpty)
    for subscription in [boxSubscription, speakerSubscription] { await subscription.cancel() }
    await publication.cancel()
    for manager in [phone, box, speaker] { await manager.shutdown() }
  }

  @Test("namespace and type filters")
  func filters() async throws {
    let world = try AirWorld()
    let cafe = try await world.device("Cafe")
    let guest = try await world.device("Guest", at: 1)
    let publications = [
      try await cafe.publish(Message(text: "menu", type: "menu", namespace: "com.cafe")),
      try await cafe.publish(Message(text: "wifi", type: "wifi", namespace: "com.cafe")),
      try await cafe.publish(Message(text: "other", type: "menu", namespace: "org.other")),
    ]
    let menus = try await world.subscribe(guest, as: "menus") {
      $0.namespace = "com.cafe"
      $0.type = "menu"
    }
    let everything = try await world.subscribe(guest, as: "cafe") { $0.namespace = "com.cafe" }
    #expect(await world.until { world.found(by: "cafe").sorted() == ["menu", "wifi"] })
    #expect(await world.until { world.found(by: "menus") == ["menu"] })
    // Withdrawing the wifi makes "cafe" lose it: the guest's events come in the resolver's
    // order, so once that lost is here, anything "menus" was sent for the matches before it
    // (a found of the wifi or of the other menu) is here too.
    await publications[1].cancel()
    #expect(await world.until { world.lost(by: "cafe") == ["wifi"] })
    #expect(world.found(by: "menus") == ["menu"], "lost: \(world.lost(by: "menus"))")
    #expect(world.lost(by: "menus").isEmpty)
    for publication in publications { await publication.cancel() }
    for subscription in [menus, everything] { await subscription.cancel() }
    await cafe.shutdown()
    await guest.shutdown()
  }

  @Test("walking out of range loses the message after lostAfter")
  func outOfRange() async throws {
    let world = try AirWorld(lostAfter: .seconds(1))
    let alice = try await world.device("Alice")
    let bob = try await world.device("Bob", at: 3)
    let publication = try await alice.publish(Message(text: "Alice"))
    let subscription = try await world.subscribe(bob, as: "Bob")
    // On a loaded machine a late advert may already cause a lost/found pair: count balance.
    #expect(await world.until { !world.found(by: "Bob").isEmpty })
    await world.air.place("Bob", at: Air.Position(x: 50))
    #expect(
      await world.until {
        world.lost(by: "Bob").count == world.found(by: "Bob").count
          && !world.lost(by: "Bob").isEmpty
      })
    let lostCount = world.lost(by: "Bob").count
    await world.air.place("Bob", at: Air.Position(x: 3))
    #expect(await world.until { world.found(by: "Bob").count == lostCount + 1 })
    #expect(Set(world.found(by: "Bob") + world.lost(by: "Bob")) == ["Alice"])
    await publication.cancel()
    await subscription.cancel()
    await alice.shutdown()
    await bob.shutdown()
  }

  @Test("TTL expiry fires expired on the subscription")
  func ttlExpiry() async throws {
    let world = try AirWorld()
    let device = try await world.device("Solo")
    let subscription = try await world.subscribe(device, as: "Solo") {
      $0.strategy.ttl = try TTL(seconds: 0.3)
    }
    var events: [SubscriptionEvent] = []
    for await event in subscription.events { events.append(event) }
    #expect(events == [.expired])
    await device.shutdown()
  }

  @Test("background with audio is rejected")
  func backgroundAudio() async throws {
    let world = try AirWorld()
    let device = try await world.device("Solo")
    await #expect(throws: StrategyError.backgroundRequiresBLEOnly(mediums: .audio)) {
      try await device.publish(Message(text: "x")) {
        $0.strategy = Strategy(mediums: .audio, allowInBackground: true)
      }
    }
    try await device.publish(Message(text: "x")) {
      $0.strategy = Strategy(mediums: .ble, allowInBackground: true)
    }.cancel()
    await device.shutdown()
  }
}
