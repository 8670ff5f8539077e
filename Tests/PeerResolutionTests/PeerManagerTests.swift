import Core
import MediumTestKit
import PeerResolution
import Strategy
import TestSupport
import Testing
import NearbyTesting

/// The seed's scenarios with real managers on the air, each device with its own peer
/// resolver: nothing is shared but the air and the peer network.
@Suite("Managers with peer resolution on the air")
struct PeerManagerTests {
  @Test("a published name is found over BLE (who-has); releasing the publication makes it lost")
  func publishedNameFoundThenLost() async throws {
    let world = PeerWorld()
    let alice = try await world.device("Alice")
    let bob = try await world.device("Bob", at: 2)
    var publication: Publication? = try await alice.publish(Message(text: "Alice", type: "name"))
    let subscription = try await world.subscribe(bob, as: "Bob")
    #expect(await world.until(timeout: PeerWorld.patience) { world.found(by: "Bob") == ["Alice"] })
    #expect(publication?.status == .active)
    publication = nil
    #expect(await world.until(timeout: PeerWorld.patience) { world.lost(by: "Bob") == ["Alice"] })
    await subscription.cancel()
    await alice.shutdown()
    await bob.shutdown()
  }

  @Test("over the LAN medium the sighting's return path is asked directly (no who-has)")
  func lanReturnPath() async throws {
    let world = PeerWorld()
    let alice = try await world.device("Alice", lan: true)
    let bob = try await world.device("Bob", at: 2, lan: true)
    let publication = try await alice.publish(Message(text: "Alice")) {
      $0.strategy = Strategy(mediums: .lan)
    }
    let subscription = try await world.subscribe(bob, as: "Bob") {
      $0.strategy = Strategy(mediums: .lan)
    }
    #expect(await world.until(timeout: PeerWorld.patience) { world.found(by: "Bob") == ["Alice"] })
    let multicasts = await world.network.log.filter { $0.to.count > 1 }
    #expect(multicasts.isEmpty)
    await publication.cancel()
    await subscription.cancel()
    await alice.shutdown()
    await bob.shutdown()
  }

  @Test("set-top box: scans-audio publication reaches broadcasts-audio subscriber, not scan-only")
  func setTopBox() async throws {
    let world = PeerWorld()
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
    #expect(await world.until(timeout: PeerWorld.patience) { world.found(by: "Box") == ["Play"] })
    // The speaker hears the box and resolves it (no publication there); the phone does not
    // broadcast, so the speaker never finds "Play".
    let speakerResolver = try #require(world.resolver(of: "Speaker"))
    #expect(
      await eventually(timeout: PeerWorld.patience) { await speakerResolver.shadowCount >= 1 })
    #expect(world.found(by: "Speaker").isEmpty)
    for subscription in [boxSubscription, speakerSubscription] { await subscription.cancel() }
    await publication.cancel()
    for manager in [phone, box, speaker] { await manager.shutdown() }
  }

  @Test("walking out of range loses the message after lostAfter; coming back finds it again")
  func outOfRange() async throws {
    // A short lostAfter on the real clock: a stall may make the message flap while in range,
    // so this checks that every found is paired with a lost when out of range, and that
    // coming back finds it again (the found-once rule is checked on a hand-moved time in
    // PeerResolverTests).
    let world = PeerWorld(lostAfter: .seconds(2))
    let alice = try await world.device("Alice")
    let bob = try await world.device("Bob", at: 3)
    let publication = try await alice.publish(Message(text: "Alice"))
    let subscription = try await world.subscribe(bob, as: "Bob")
    #expect(await world.until(timeout: PeerWorld.patience) { !world.found(by: "Bob").isEmpty })
    await world.air.place("Bob", at: Air.Position(x: 50))
    #expect(
      await world.until(timeout: PeerWorld.patience) {
        world.lost(by: "Bob").count == world.found(by: "Bob").count
          && !world.lost(by: "Bob").isEmpty
      })
    let lostCount = world.lost(by: "Bob").count
    await world.air.place("Bob", at: Air.Position(x: 3))
    #expect(
      await world.until(timeout: PeerWorld.patience) { world.found(by: "Bob").count > lostCount })
    #expect(Set(world.found(by: "Bob") + world.lost(by: "Bob")) == ["Alice"])
    await publication.cancel()
    await subscription.cancel()
    await alice.shutdown()
    await bob.shutdown()
  }

  @Test(
    "the box's audio slows once the phone asked about its token, and seeks again once nobody asks")
  func answeredTokenSlowsAudio() async throws {
    let world = PeerWorld(lostAfter: .seconds(2))
    let phone = try await world.device("Phone")
    let box = try await world.device("Box", at: 1)
    let boxSubscription = try await world.subscribe(box, as: "Box") {
      $0.strategy = Strategy(mediums: .audio, mode: .broadcast)
    }
    let publication = try await phone.publish(Message(text: "Play", type: "cast")) {
      $0.strategy = Strategy(mediums: .audio, mode: .scan)
    }
    #expect(await world.until(timeout: PeerWorld.patience) { world.found(by: "Box") == ["Play"] })
    // The phone heard the box's token on audio and asked: hearers hold it.
    #expect(
      await eventually(timeout: PeerWorld.patience) {
        await world.air.transmitPace(of: "Box", medium: .audio)
          == .answered(refreshWithin: .seconds(2))
      })
    #expect(await world.air.transmitPace(of: "Box", medium: .ble) == nil)
    // Out of earshot nobody asks: after twice lostAfter it seeks again.
    await world.air.place("Phone", at: Air.Position(x: 50))
    #expect(
      await eventually(timeout: PeerWorld.patience) {
        await world.air.transmitPace(of: "Box", medium: .audio) == .seeking
      })
    await boxSubscription.cancel()
    await publication.cancel()
    for manager in [phone, box] { await manager.shutdown() }
  }

  @Test("a device of another project beside them finds nothing, and they find nothing of it")
  func otherProject() async throws {
    let world = PeerWorld()
    let alice = try await world.device("Alice")
    let bob = try await world.device("Bob", at: 1)
    let mallory = try await world.device("Mallory", at: 1, apiKey: "another-project")
    let publications = [
      try await alice.publish(Message(text: "Alice")),
      try await mallory.publish(Message(text: "Mallory")),
    ]
    let subscriptions = [
      try await world.subscribe(bob, as: "Bob"),
      try await world.subscribe(mallory, as: "Mallory"),
    ]
    #expect(await world.until(timeout: PeerWorld.patience) { world.found(by: "Bob") == ["Alice"] })
    let aliceResolver = try #require(world.resolver(of: "Alice"))
    #expect(
      await eventually(timeout: PeerWorld.patience) {
        await aliceResolver.counters().droppedOtherProject > 0
      })
    #expect(world.found(by: "Mallory").isEmpty)
    #expect(world.found(by: "Bob") == ["Alice"])
    for subscription in subscriptions { await subscription.cancel() }
    for publication in publications { await publication.cancel() }
    for manager in [alice, bob, mallory] { await manager.shutdown() }
  }
}
