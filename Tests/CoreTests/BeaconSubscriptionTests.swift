import TestSupport
@_spi(Resolver) @testable import Core
import Foundation
import MediumTestKit
import Strategy
import Testing
import Tokens
import NearbyTesting
import BeaconFrames

/// Beacon subscriptions through a manager on the in-memory air: the wiring of
/// `BeaconTracking` (whose rules, timing included, BeaconTrackingTests checks on instants) to
/// the mediums, the resolver and the subscriptions. The air re-advertises every 50 ms of real
/// time; the manager runs on a `ManualClock` that only the test moves, so its decisions (a
/// beacon lost after 1 s of silence, the cache's TTL) happen when the test says, however
/// loaded the machine. Tests wait for events or for frames heard, never for a fixed time;
/// what must not happen is checked over the whole stream once it is finished.
@Suite("Beacon subscriptions")
struct BeaconSubscriptionTests {
  struct Device {
    let air: Air
    let resolver: BeaconResolver
    let manager: MessageManager
    /// The manager's clock.
    let clock: ManualClock

    /// Moves the manager's time on by `duration` in steps of `step`, a frame heard between
    /// steps.
    func pass(step: Duration = .milliseconds(100), upTo duration: Duration) async {
      _ = await pass(step: step, upTo: duration, catchUp: false) { false }
    }

    /// Moves the manager's time on in steps of `step` until `condition` holds; false if it
    /// did not within `limit` of the manager's time. `hearing`: a frame is heard between
    /// steps (the beacon is in range all along).
    func pass(
      step: Duration = .milliseconds(100), upTo limit: Duration = .seconds(10),
      hearing: Bool = true, catchUp: Bool = true, until condition: () -> Bool
    ) async -> Bool {
      var passed = Duration.zero
      while !condition() {
        // `condition` reads streams recorded by tasks of their own, which may lag behind
        // the manager on a loaded machine: at the limit, give them (real) time to catch up.
        guard passed < limit else { return catchUp ? await eventually { condition() } : false }
        if hearing { await hearMore(1) }
        clock.advance(by: step)
        passed += step
        // What woke (a sweep, a timer) runs to its end before the next look: a wait for the
        // manager's rest, not for an outcome, bounded by a hang.
        guard
          await eventually(
            timeout: .seconds(10), interval: .milliseconds(5), { await manager.isIdle })
        else {
          Issue.record("the manager did not come to rest in 10 s")
          return false
        }
      }
      return true
    }

    /// Waits until the manager has handled `count` more beacon frames (a hang is recorded
    /// after 30 s): heard, not only sent by the air, before the test moves the manager's time.
    func hearMore(_ count: Int) async {
      let start = await manager.beaconFramesHandled
      #expect(
        await eventually { await manager.beaconFramesHandled >= start + count },
        "frames not handled")
    }

    /// Shuts the manager down and waits for `streams` to finish: from then on their
    /// recorded elements are everything they will ever get.
    func finish<each E>(_ streams: repeat StreamRecorder<each E>) async {
      await manager.shutdown()
      for stream in repeat each streams {
        #expect(await stream.waitUntilFinished(timeout: .seconds(30)))
      }
    }
  }

  func device(cacheTTL: Duration = .seconds(300)) async throws -> Device {
    let clock = ManualClock()
    var airConfiguration = Air.Configuration()
    airConfiguration.advertiseInterval = .milliseconds(50)
    airConfiguration.bleRange = 100
    let air = Air(configuration: airConfiguration)
    await air.place("me", at: .origin)
    let resolver = try BeaconResolver()
    var configuration = MessageManager.Configuration(
      resolver: .custom(resolver), mediums: MediumProvider.air(air, device: "me", mediums: .ble))
    configuration.beaconLostAfter = .seconds(1)
    configuration.beaconSmoothingWindow = .milliseconds(500)
    configuration.beaconCacheTTL = cacheTTL
    configuration.clock = clock
    let manager = try await MessageManager(apiKey: "test", configuration: configuration)
    return Device(air: air, resolver: resolver, manager: manager, clock: clock)
  }

  let menu = TestBeacons.attachment("a1", "com.example", "menu", "soup")
  let price = TestBeacons.attachment("a2", "com.example", "price", "3 EUR")
  let other = TestBeacons.attachment("a3", "org.other", "menu", "bread")

  @Test("a beacon's attachments are found, filtered by namespace and type, then lost")
  func foundAndLost() async throws {
    let device = try await device()
    let uid = BeaconID(frame: .eddystoneUID(TestBeacons.uid))!
    device.resolver.register(uid, attachments: [menu, price, other])
    let all = try await device.manager.subscribe(configure: { $0.deviceTypes = .bleBeacons })
    let namespaced = try await device.manager.subscribe(configure: {
      $0.deviceTypes = .bleBeacons
      $0.namespace = "com.example"
    })
    let typed = try await device.manager.subscribe(configure: {
      $0.deviceTypes = .bleBeacons
      $0.namespace = "com.example"
      $0.type = "menu"
    })
    #expect(all.status == .active)
    let (allEvents, nsEvents, typeEvents) = (
      StreamRecorder(all.events), StreamRecorder(namespaced.events), StreamRecorder(typed.events)
    )
    await device.air.placeBeacon("b1", frames: [.eddystoneUID(TestBeacons.uid)], at: .init(x: 1))

    _ = await allEvents.waitForCount(3 + 3 * 2)
    #expect(
      Set(allEvents.elements.compactMap(\.found)) == [menu.message, price.message, other.message])
    _ = await nsEvents.waitForCount(2)
    #expect(Set(nsEvents.elements.compactMap(\.found)) == [menu.message, price.message])
    #expect(await typeEvents.first { $0.found != nil }?.found == menu.message)
    // After found: a distance and a signal for the attachment.
    let distance = await typeEvents.first { $0.distance != nil }?.distance
    #expect(distance != nil)
    #expect(await typeEvents.first { $0.signal != nil } != nil)
    await device.hearMore(10)

    await device.air.removeBeacon("b1")
    // Silent for lostAfter (1 s) of the manager's time: lost.
    #expect(
      await device.pass(hearing: false) { allEvents.elements.contains { $0.lost == other.message } }
    )
    #expect(await typeEvents.first(timeout: .seconds(10)) { $0.lost != nil }?.lost == menu.message)
    await device.finish(allEvents, nsEvents, typeEvents)
    // Found once each, however often the beacon was heard; each subscription its share only.
    #expect(typeEvents.elements.compactMap(\.found) == [menu.message])
    #expect(nsEvents.elements.compactMap(\.found).count == 2)
    #expect(allEvents.elements.compactMap(\.found).count == 3)
    #expect(
      Set(allEvents.elements.compactMap(\.lost)) == [menu.message, price.message, other.message])
  }

  @Test("another project's public namespace reaches only the subscriptions that name it")
  func sharedAttachmentsNeedTheirNamespaceNamed() async throws {
    let device = try await device()
    let uid = BeaconID(frame: .eddystoneUID(TestBeacons.uid))!
    let shared = BeaconAttachment(
      name: "s1", namespace: "partner.menus", type: "menu", data: Data("theirs".utf8),
      isShared: true)
    device.resolver.register(uid, attachments: [menu, shared])
    let all = try await device.manager.subscribe(configure: { $0.deviceTypes = .bleBeacons })
    let allEvents = StreamRecorder(all.events)
    await device.air.placeBeacon("b1", frames: [.eddystoneUID(TestBeacons.uid)], at: .init(x: 1))
    _ = await allEvents.first { $0.found == menu.message }
    // A subscription naming the namespace later: the cached answer is asked again, with it.
    let named = try await device.manager.subscribe(configure: {
      $0.deviceTypes = .bleBeacons
      $0.namespace = "partner.menus"
    })
    let namedEvents = StreamRecorder(named.events)
    let found = await namedEvents.first { $0.found != nil }
    #expect(found?.found == shared.message)
    #expect(device.resolver.askedNamespacedTypes.first == ["*"])
    #expect(device.resolver.askedNamespacedTypes.last == ["*", "partner.menus/*"])
    await device.hearMore(10)
    await device.finish(allEvents, namedEvents)
    #expect(allEvents.elements.compactMap(\.found) == [menu.message])
    #expect(namedEvents.elements.compactMap(\.found) == [shared.message])
  }

  @Test("includeIBeacons false ignores iBeacons; filters narrow to one Eddystone namespace")
  func iBeaconsAndFilters() async throws {
    let device = try await device()
    let uid = BeaconID(frame: .eddystoneUID(TestBeacons.uid))!
    let otherUID = BeaconID(frame: .eddystoneUID(TestBeacons.otherUID))!
    let iBeacon = BeaconID(frame: .iBeacon(TestBeacons.iBeacon))!
    device.resolver.register(uid, attachments: [menu])
    device.resolver.register(otherUID, attachments: [price])
    device.resolver.register(iBeacon, attachments: [other])
    let eddystoneOnly = try await device.manager.subscribe(configure: {
      $0.deviceTypes = .bleBeacons
      $0.beaconStrategy = BeaconStrategy(includeIBeacons: false)
    })
    let filtered = try await device.manager.subscribe(configure: {
      $0.deviceTypes = .bleBeacons
      $0.beaconFilters = [try .eddystoneUID(namespaceHex: "edd1ebeac04e5defa017")]
    })
    let everything = try await device.manager.subscribe(configure: { $0.deviceTypes = .bleBeacons })
    let (eddystoneEvents, filteredEvents, allEvents) = (
      StreamRecorder(eddystoneOnly.events), StreamRecorder(filtered.events),
      StreamRecorder(everything.events)
    )
    await device.air.placeBeacon("uid", frames: [.eddystoneUID(TestBeacons.uid)], at: .init(x: 1))
    await device.air.placeBeacon(
      "other", frames: [.eddystoneUID(TestBeacons.otherUID)], at: .init(x: 2))
    await device.air.placeBeacon("ib", frames: [.iBeacon(TestBeacons.iBeacon)], at: .init(x: 3))

    _ = await allEvents.first { $0.found == other.message }
    _ = await allEvents.first { $0.found == price.message }
    _ = await allEvents.first { $0.found == menu.message }
    #expect(
      Set(allEvents.elements.compactMap(\.found)) == [menu.message, price.message, other.message])
    await device.hearMore(30)
    await device.finish(eddystoneEvents, filteredEvents, allEvents)
    #expect(Set(eddystoneEvents.elements.compactMap(\.found)) == [menu.message, price.message])
    #expect(eddystoneEvents.elements.compactMap(\.found).count == 2)
    #expect(filteredEvents.elements.compactMap(\.found) == [menu.message])
    #expect(allEvents.elements.compactMap(\.found).count == 3)
  }

  @Test("a beacon moving away reports growing distances, then is lost out of range")
  func movingAway() async throws {
    let device = try await device()
    let uid = BeaconID(frame: .eddystoneUID(TestBeacons.uid))!
    device.resolver.register(uid, attachments: [menu])
    let subscription = try await device.manager.subscribe(configure: {
      $0.deviceTypes = .bleBeacons
    })
    let events = StreamRecorder(subscription.events)
    await device.air.placeBeacon("b1", frames: [.eddystoneUID(TestBeacons.uid)], at: .init(x: 1))
    let near = try #require(await events.first { $0.distance != nil }?.distance)
    // Eddystone TX power −18 dBm at 0 m, 41 dB over the first metre: −59 dBm at 1 m.
    #expect(abs(near.metres - 1) < 0.2)

    let moved = ContinuousClock.now
    await device.air.place("b1", at: .init(x: 8))
    // The near frames leave the smoothing window as the manager's time passes, frames heard
    // between its steps: then the distance is the far frames' alone, however many near
    // frames were still queued when the beacon moved.
    let isFar = { (event: SubscriptionEvent) in (event.distance?.metres ?? 0) > 6 }
    #expect(await device.pass { events.elements(since: moved).contains(where: isFar) })
    // One more smoothing window of far frames: the distance settled, not on its way.
    await device.pass(upTo: .milliseconds(600))
    let far = try #require(events.elements(since: moved).last(where: isFar)?.distance)
    #expect(abs(far.metres - 8) < 1)
    #expect(far.accuracy > near.accuracy)
    let signal = try #require(events.elements(since: moved).compactMap(\.signal).last)
    #expect(signal.rssi < -70)
    #expect(signal.txPower == -59)

    await device.air.place("b1", at: .init(x: 500))  // out of the air's 100 m range
    #expect(
      await device.pass(hearing: false) {
        events.elements(since: moved).contains { $0.lost != nil }
      })
    #expect(events.elements(since: moved).compactMap(\.lost) == [menu.message])
    await device.manager.shutdown()
  }

  @Test("the resolver is asked once per beacon id while its answer is cached")
  func cached() async throws {
    let device = try await device()
    let uid = BeaconID(frame: .eddystoneUID(TestBeacons.uid))!
    device.resolver.register(uid, attachments: [menu])
    let subscription = try await device.manager.subscribe(configure: {
      $0.deviceTypes = .bleBeacons
    })
    let events = StreamRecorder(subscription.events)
    await device.air.placeBeacon("b1", frames: [.eddystoneUID(TestBeacons.uid)], at: .init(x: 1))
    // An unregistered beacon is asked for once too, and stays unknown.
    await device.air.placeBeacon(
      "stranger", frames: [.eddystoneUID(TestBeacons.otherUID)], at: .init(x: 1))
    _ = await events.first { $0.found != nil }
    await device.hearMore(20)  // about 10 advertisements each
    await device.finish(events)
    // Each id asked for once (maybe in one request), however often it was heard.
    #expect(device.resolver.askedIDs.count == 2)
    #expect(
      Set(device.resolver.askedIDs) == [uid, BeaconID(frame: .eddystoneUID(TestBeacons.otherUID))!])
    #expect(events.elements.compactMap(\.found) == [menu.message])
  }

  @Test("telemetry heard from a beacon's transmitter goes with its next look-up, latest only")
  func telemetryTravelsWithTheNextLookUp() async throws {
    let device = try await device(cacheTTL: .milliseconds(300))
    let uid = BeaconID(frame: .eddystoneUID(TestBeacons.uid))!
    device.resolver.register(uid, attachments: [menu])
    let subscription = try await device.manager.subscribe(configure: {
      $0.deviceTypes = .bleBeacons
    })
    let events = StreamRecorder(subscription.events)
    let early = EddystoneTLM(
      batteryMillivolts: 2950, temperatureCelsius: 21, advertisingCount: 10, uptimeDeciseconds: 5)
    let late = EddystoneTLM(
      batteryMillivolts: 2940, temperatureCelsius: 21, advertisingCount: 99, uptimeDeciseconds: 50)
    // An interleaving beacon: UID and TLM from one transmitter; a TLM-only transmitter nearby
    // identifies nothing, so its telemetry goes nowhere.
    await device.air.placeBeacon(
      "b1", frames: [.eddystoneUID(TestBeacons.uid), .eddystoneTLM(early)], at: .init(x: 1))
    await device.air.placeBeacon("lone", frames: [.eddystoneTLM(late)], at: .init(x: 2))
    _ = await events.first { $0.found != nil }
    #expect(
      await device.resolver.until(timeout: .seconds(30)) {
        device.resolver.forwardedTelemetry.contains { $0.frame == early.frame }
      })
    #expect(device.resolver.forwardedTelemetry.allSatisfy { $0.id == uid })
    // A newer frame replaces the held one; it goes with the refresh after the cache's TTL.
    await device.air.placeBeacon(
      "b1", frames: [.eddystoneUID(TestBeacons.uid), .eddystoneTLM(late)], at: .init(x: 1))
    await device.hearMore(4)
    #expect(
      await device.pass(step: .milliseconds(50), upTo: .milliseconds(900)) {
        device.resolver.forwardedTelemetry.last?.frame == late.frame
      })
    // Telemetry only travels with look-ups: never more often than the cache refreshes.
    let lookups = device.resolver.lookupCount
    #expect(device.resolver.forwardedTelemetry.count <= lookups)
    await device.manager.shutdown()
  }

  @Test("a failed refresh of an expired answer leaves the beacon found")
  func resolverDownAfterExpiry() async throws {
    let device = try await device(cacheTTL: .milliseconds(200))
    let uid = BeaconID(frame: .eddystoneUID(TestBeacons.uid))!
    device.resolver.register(uid, attachments: [menu])
    let subscription = try await device.manager.subscribe(configure: {
      $0.deviceTypes = .bleBeacons
    })
    let events = StreamRecorder(subscription.events)
    await device.air.placeBeacon("b1", frames: [.eddystoneUID(TestBeacons.uid)], at: .init(x: 1))
    _ = await events.first { $0.found != nil }
    device.resolver.setUnreachable(true)
    // 2.5 s of the manager's time (longer than lostAfter) with the beacon heard throughout:
    // the refresh after the 200 ms TTL fails, and the beacon stays found.
    await device.pass(upTo: .milliseconds(2500))
    #expect(device.resolver.lookupCount >= 2)  // it tried to refresh
    await device.finish(events)
    #expect(events.elements.compactMap(\.lost).isEmpty)
    #expect(events.elements.compactMap(\.found) == [menu.message])
  }

  @Test("ids that no subscription accepts are never sent to the resolver")
  func unwantedIDsStayLocal() async throws {
    let device = try await device()
    let uid = BeaconID(frame: .eddystoneUID(TestBeacons.uid))!
    device.resolver.register(uid, attachments: [menu])
    let subscription = try await device.manager.subscribe(configure: {
      $0.deviceTypes = .bleBeacons
      $0.beaconStrategy.includeIBeacons = false
    })
    let events = StreamRecorder(subscription.events)
    await device.air.placeBeacon("ib", frames: [.iBeacon(TestBeacons.iBeacon)], at: .init(x: 1))
    await device.air.placeBeacon("b1", frames: [.eddystoneUID(TestBeacons.uid)], at: .init(x: 1))
    _ = await events.first { $0.found != nil }
    await device.hearMore(10)  // the iBeacon's among them
    #expect(device.resolver.askedIDs == [uid])
    await #expect(throws: ManagerError.self) {
      try await device.manager.subscribe(configure: {
        $0.deviceTypes = .bleBeacons
        $0.beaconStrategy.includeIBeacons = false
        $0.beaconFilters = [try .iBeacon(uuid: "e2c56db5-dffb-48d2-b060-d0f5a71096e0")]
      })
    }
    await device.manager.shutdown()
  }

  @Test("a room full of new beacons costs a few requests, not one each")
  func batchedLookups() async throws {
    let device = try await device()
    // The first request is held (a slow network) while every beacon is heard.
    device.resolver.hold()
    // The beacons are there first; the subscription hears them all in its first scan.
    for index in 0..<20 {
      let uid = try EddystoneUID(
        namespace: TestBeacons.namespace,
        instance: BeaconBytes([0, 0, 0, 0, 0, UInt8(index)]), txPower: -18)
      device.resolver.register(
        BeaconID(frame: .eddystoneUID(uid))!,
        attachments: [TestBeacons.attachment("a", "ns", "t", "beacon \(index)")])
      await device.air.placeBeacon("b\(index)", frames: [.eddystoneUID(uid)], at: .init(x: 1))
    }
    let subscription = try await device.manager.subscribe(configure: {
      $0.deviceTypes = .bleBeacons
    })
    let events = StreamRecorder(subscription.events)
    #expect(await device.resolver.until { device.resolver.heldCount == 1 })
    await device.hearMore(60)  // each beacon three times
    #expect(device.resolver.heldCount == 1, "one request at a time")
    device.resolver.release()
    #expect(
      await events.until { Set($0.compactMap(\.found)).count == 20 },
      "found \(Set(events.elements.compactMap(\.found)).count)")
    // The first request, and (unless the first had them all) one with every id heard while
    // it was held.
    #expect(device.resolver.askedIDs.count == 20)
    #expect(device.resolver.lookupCount <= 2, "requests: \(device.resolver.lookupCount)")
    await device.manager.shutdown()
  }

  @Test("an attachment removed on the resolver is lost when the cache expires")
  func attachmentRemoved() async throws {
    let device = try await device(cacheTTL: .milliseconds(300))
    let uid = BeaconID(frame: .eddystoneUID(TestBeacons.uid))!
    device.resolver.register(uid, attachments: [menu, price])
    let subscription = try await device.manager.subscribe(configure: {
      $0.deviceTypes = .bleBeacons
    })
    let events = StreamRecorder(subscription.events)
    await device.air.placeBeacon("b1", frames: [.eddystoneUID(TestBeacons.uid)], at: .init(x: 1))
    _ = await events.first { $0.found == price.message }
    device.resolver.register(uid, attachments: [menu])
    // Asked again once the 300 ms TTL passed on the manager's clock.
    #expect(await device.pass(upTo: .seconds(1)) { events.elements.contains { $0.lost != nil } })
    #expect(await events.first { $0.lost != nil }?.lost == price.message)
    #expect(events.elements.compactMap(\.lost) == [price.message])
    await device.manager.shutdown()
  }

  @Test("an Eddystone-EID beacon keeps its attachment found across a rotation")
  func eidRotation() async throws {
    let device = try await device()
    let first = TestBeacons.eid("0102030405060708")
    let second = TestBeacons.eid("1112131415161718")
    // The resolver links both ephemeral ids to one registered beacon.
    for eid in [first, second] {
      device.resolver.register(
        BeaconID(frame: .eddystoneEID(eid))!, name: "eddystone-eid!0102030405060708",
        attachments: [menu])
    }
    let subscription = try await device.manager.subscribe(configure: {
      $0.deviceTypes = .bleBeacons
    })
    let events = StreamRecorder(subscription.events)
    await device.air.placeBeacon("eid", frames: [.eddystoneEID(first)], at: .init(x: 1))
    _ = await events.first { $0.found != nil }
    await device.air.placeBeacon("eid", frames: [.eddystoneEID(second)], at: .init(x: 1))
    #expect(await device.resolver.until { device.resolver.askedIDs.count == 2 })
    await device.hearMore(10)
    await device.finish(events)
    #expect(device.resolver.askedIDs.count == 2)
    #expect(events.elements.compactMap(\.found) == [menu.message])
    #expect(events.elements.compactMap(\.lost).isEmpty)
  }

  @Test("a beacon subscription pauses in background unless its beacon strategy allows it")
  func background() async throws {
    let device = try await device()
    let uid = BeaconID(frame: .eddystoneUID(TestBeacons.uid))!
    device.resolver.register(uid, attachments: [menu])
    let foreground = try await device.manager.subscribe(configure: { $0.deviceTypes = .bleBeacons })
    let background = try await device.manager.subscribe(configure: {
      $0.deviceTypes = .bleBeacons
      $0.beaconStrategy.allowInBackground = true
    })
    await device.manager.setAppState(.background)
    #expect(foreground.status == .paused)
    #expect(background.status == .active)
    let (foregroundEvents, backgroundEvents) = (
      StreamRecorder(foreground.events), StreamRecorder(background.events)
    )
    await device.air.placeBeacon("b1", frames: [.eddystoneUID(TestBeacons.uid)], at: .init(x: 1))
    _ = await backgroundEvents.first { $0.found != nil }
    #expect(foregroundEvents.elements.isEmpty)
    await device.manager.setAppState(.foreground)
    #expect(foreground.status == .active)
    #expect(await foregroundEvents.first { $0.found != nil }?.found == menu.message)
    await device.manager.shutdown()
  }

  @Test("a beacon subscription needs a medium that scans for beacons, and expires on its TTL")
  func mediumAndExpiry() async throws {
    let bare = try await MessageManager(
      apiKey: "test", configuration: .init(resolver: .custom(try BeaconResolver())))
    await #expect(throws: ManagerError.self) {
      try await bare.subscribe(configure: { $0.deviceTypes = .bleBeacons })
    }
    await bare.shutdown()

    // The TTL runs on the manager's clock: stepped by hand, no waiting.
    let device = try await device()
    let clock = device.clock
    let expired = Calls<Bool>()
    let sleepers = clock.sleeperCount
    let subscription = try await device.manager.subscribe(configure: {
      $0.deviceTypes = .bleBeacons
      $0.strategy.ttl = try TTL(seconds: 30)
      $0.expiredHandler = { expired.append(true) }
    })
    let events = StreamRecorder(subscription.events)
    #expect(await clock.untilSleepers { $0 > sleepers }, "no TTL timer")
    clock.advance(by: .seconds(29))
    #expect(subscription.status == .active)
    clock.advance(by: .seconds(1))
    #expect(await events.waitUntilFinished(timeout: .seconds(10)))
    #expect(events.elements == [.expired])
    #expect(expired.all == [true])
    #expect(subscription.status == .inactive)
    #expect(await device.manager.subscriptionCount == 0)
    await device.manager.shutdown()
  }
}
