import Foundation
import Testing
import Tokens

@_spi(Resolver) @testable import Core
import BeaconFrames

/// The beacon subscriptions' decisions on a timeline of instants: no clock, no air, no
/// resolver. Each test plays the performer: it hears frames at instants, runs the look-ups
/// the machine asks for and sweeps when told to.
@Suite("BeaconTracking")
struct BeaconTrackingTests {
  typealias Instant = NearbyClock.Instant

  static let lostAfter = Duration.seconds(1)
  static let cacheTTL = Duration.seconds(300)

  let everything = SubscriptionID.random()
  let menu = BeaconAttachment(
    name: "a1", namespace: "com.example", type: "menu", data: Data("soup".utf8))
  let price = BeaconAttachment(
    name: "a2", namespace: "com.example", type: "price", data: Data("3 EUR".utf8))
  let uidFrame = BeaconFrame.eddystoneUID(TestBeacons.uid)
  let otherFrame = BeaconFrame.eddystoneUID(TestBeacons.otherUID)
  let t0 = Instant(offset: .seconds(1000))

  static func interest(
    namespace: String = "", type: String? = nil, includeIBeacons: Bool = true,
    filters: [BeaconFilter] = []
  ) -> BeaconInterest {
    BeaconInterest(
      namespace: namespace, type: type, includeIBeacons: includeIBeacons, filters: filters)
  }

  func machine(cacheTTL: Duration = Self.cacheTTL) -> BeaconTracking {
    BeaconTracking(
      settings: .init(
        lostAfter: Self.lostAfter, smoothingWindow: .milliseconds(500), model: PathLossModel()),
      cacheTTL: cacheTTL)
  }

  func id(_ frame: BeaconFrame) -> BeaconID { BeaconID(frame: frame)! }

  func info(_ frame: BeaconFrame, name: String? = nil, _ attachments: [BeaconAttachment])
    -> BeaconInfo
  {
    BeaconInfo(observed: id(frame), beaconName: name ?? "\(id(frame))", attachments: attachments)
  }

  func sighting(_ frame: BeaconFrame, from address: String = "AA:00", rssi: Int? = -59)
    -> BeaconSighting
  {
    BeaconSighting(address: address, frame: frame, rssi: rssi)
  }

  @Test(
    "the first frame asks for a look-up and a sweep; ids heard meanwhile wait for the next request")
  func firstFrameAndBatching() {
    var tracking = machine()
    let interests = [everything: Self.interest()]
    #expect(
      tracking.heard(sighting(uidFrame), interests: interests, at: t0)
        == [.startLookups, .startSweeping(every: .milliseconds(250))])
    // Heard again, and a second id, while the look-up has not run: no second runner, no
    // second sweep, and the first id is not queued twice.
    #expect(
      tracking.heard(sighting(uidFrame), interests: interests, at: t0 + .milliseconds(50)).isEmpty)
    #expect(
      tracking.heard(sighting(otherFrame, from: "BB:00"), interests: interests, at: t0).isEmpty)
    let lookup = tracking.nextLookup()
    #expect(lookup?.ids == [id(uidFrame), id(otherFrame)])
    #expect(lookup?.namespacedTypes == ["*"])
    #expect(tracking.nextLookup() == nil)
    // The runner ended: the next id starts a new one.
    let third = BeaconFrame.iBeacon(TestBeacons.iBeacon)
    #expect(
      tracking.heard(sighting(third, from: "CC:00"), interests: interests, at: t0)
        == [.startLookups])
  }

  @Test("a look-up carries at most the batch limit of ids; the rest go in the next")
  func batchLimit() throws {
    var tracking = machine()
    let interests = [everything: Self.interest()]
    for index in 0..<(BeaconTracking.lookupBatchLimit + 5) {
      let uid = try EddystoneUID(
        namespace: TestBeacons.namespace,
        instance: BeaconBytes([0, 0, 0, 0, UInt8(index >> 8), UInt8(index & 0xff)]), txPower: -18)
      _ = tracking.heard(
        sighting(.eddystoneUID(uid), from: "\(index)"), interests: interests, at: t0)
    }
    #expect(tracking.nextLookup()?.ids.count == BeaconTracking.lookupBatchLimit)
    #expect(tracking.nextLookup()?.ids.count == 5)
    #expect(tracking.nextLookup() == nil)
  }

  @Test(
    "an answer finds the attachments each subscription wants, once, however often the beacon is heard"
  )
  func answerFindsOncePerSubscription() {
    var tracking = machine()
    let namespaced = SubscriptionID.random()
    let typed = SubscriptionID.random()
    let other = BeaconAttachment(
      name: "a3", namespace: "org.other", type: "menu", data: Data("bread".utf8))
    let interests = [
      everything: Self.interest(),
      namespaced: Self.interest(namespace: "com.example"),
      typed: Self.interest(namespace: "com.example", type: "menu"),
    ]
    _ = tracking.heard(sighting(uidFrame), interests: interests, at: t0)
    let lookup = tracking.nextLookup()!
    let actions = tracking.answered(
      lookup.ids, with: [info(uidFrame, [menu, price, other])], interests: interests, at: t0)
    let found = Self.found(actions)
    #expect(Set(found[everything] ?? []) == [menu.message, price.message, other.message])
    #expect(Set(found[namespaced] ?? []) == [menu.message, price.message])
    #expect(found[typed] == [menu.message])
    // Heard ten more times within the cache's TTL: no look-up, no second found.
    for step in 1...10 {
      let later = tracking.heard(
        sighting(uidFrame), interests: interests, at: t0 + .milliseconds(50 * step))
      #expect(!later.contains(.startLookups))
      #expect(Self.found(later).isEmpty)
    }
    #expect(tracking.nextLookup() == nil)
  }

  @Test("a beacon silent for lostAfter is lost at the next sweep, then the sweep stops")
  func lostAfterSilence() {
    var tracking = machine()
    let interests = [everything: Self.interest()]
    _ = tracking.heard(sighting(uidFrame), interests: interests, at: t0)
    let lookup = tracking.nextLookup()!
    _ = tracking.answered(lookup.ids, with: [info(uidFrame, [menu])], interests: interests, at: t0)
    // Still within lostAfter: nothing.
    #expect(tracking.sweep(at: t0 + Self.lostAfter).isEmpty)
    let actions = tracking.sweep(at: t0 + Self.lostAfter + .milliseconds(1))
    #expect(Self.lost(actions)[everything] == [menu.message])
    #expect(actions.last == .stopSweeping)
    #expect(tracking.tracker.isIdle)
    // Heard again: a new sweep, and the cached answer finds it again at once.
    let again = tracking.heard(sighting(uidFrame), interests: interests, at: t0 + .seconds(5))
    #expect(Self.found(again)[everything] == [menu.message])
    #expect(again.contains(.startSweeping(every: tracking.sweepPeriod)))
    #expect(!again.contains(.startLookups))
  }

  @Test("a beacon in range stays found while its expired answer cannot be refreshed")
  func resolverDownAfterExpiry() {
    var tracking = machine(cacheTTL: .milliseconds(200))
    let interests = [everything: Self.interest()]
    _ = tracking.heard(sighting(uidFrame), interests: interests, at: t0)
    let first = tracking.nextLookup()!
    _ = tracking.answered(first.ids, with: [info(uidFrame, [menu])], interests: interests, at: t0)
    #expect(tracking.nextLookup() == nil)
    // Heard every 100 ms for 2.5 s (longer than lostAfter), swept every 250 ms; every
    // refresh fails.
    var lookups = 0
    var events: [BeaconTracking.Action] = []
    for step in 1...25 {
      let time = t0 + .milliseconds(100 * step)
      let actions = tracking.heard(sighting(uidFrame), interests: interests, at: time)
      events += actions
      if actions.contains(.startLookups), let refresh = tracking.nextLookup() {
        lookups += 1
        #expect(refresh.ids == [id(uidFrame)])
        tracking.lookupFailed(refresh.ids, at: time)
        #expect(tracking.nextLookup() == nil)
      }
      if step.isMultiple(of: 3) { events += tracking.sweep(at: time) }
    }
    #expect(Self.lost(events).isEmpty)
    #expect(Self.found(events).isEmpty)
    // A failed id is retried after the cache's retryAfter (5 s), not at every frame.
    #expect(lookups == 1)
    let retried = tracking.heard(sighting(uidFrame), interests: interests, at: t0 + .seconds(8))
    #expect(retried.contains(.startLookups))
  }

  @Test("an unknown beacon is asked again after a fifth of the TTL; a known one after the TTL")
  func unknownAndKnownExpiry() {
    var tracking = machine(cacheTTL: .seconds(10))
    let interests = [everything: Self.interest()]
    _ = tracking.heard(sighting(uidFrame), interests: interests, at: t0)
    _ = tracking.heard(sighting(otherFrame, from: "BB:00"), interests: interests, at: t0)
    let lookup = tracking.nextLookup()!
    // The resolver knows the first only.
    _ = tracking.answered(lookup.ids, with: [info(uidFrame, [menu])], interests: interests, at: t0)
    _ = tracking.nextLookup()
    // An answer lasts until its expiry instant, exclusive.
    let atTwoSeconds = t0 + .seconds(2)
    // Keep both heard (not lost) until just before the unknown answer expires.
    for step in 1...19 {
      let time = t0 + .milliseconds(100 * step)
      _ = tracking.heard(sighting(uidFrame), interests: interests, at: time)
      _ = tracking.heard(sighting(otherFrame, from: "BB:00"), interests: interests, at: time)
    }
    #expect(tracking.nextLookup() == nil)
    _ = tracking.heard(sighting(uidFrame), interests: interests, at: atTwoSeconds)
    #expect(
      tracking.heard(sighting(otherFrame, from: "BB:00"), interests: interests, at: atTwoSeconds)
        == [.startLookups])
    #expect(tracking.nextLookup()?.ids == [id(otherFrame)])
  }

  @Test("an attachment removed on the resolver is lost when the refreshed answer lacks it")
  func attachmentRemoved() {
    var tracking = machine(cacheTTL: .milliseconds(300))
    let interests = [everything: Self.interest()]
    _ = tracking.heard(sighting(uidFrame), interests: interests, at: t0)
    let first = tracking.nextLookup()!
    let found = tracking.answered(
      first.ids, with: [info(uidFrame, [menu, price])], interests: interests, at: t0)
    #expect(Set(Self.found(found)[everything] ?? []) == [menu.message, price.message])
    _ = tracking.nextLookup()
    let later = t0 + .milliseconds(400)
    #expect(
      tracking.heard(sighting(uidFrame), interests: interests, at: later).contains(.startLookups))
    let refresh = tracking.nextLookup()!
    let actions = tracking.answered(
      refresh.ids, with: [info(uidFrame, [menu])], interests: interests, at: later)
    #expect(Self.lost(actions)[everything] == [price.message])
    #expect(Self.found(actions).isEmpty)
  }

  @Test("iBeacons are ignored when not included, and filters narrow the ids followed")
  func unwantedIDsStayLocal() throws {
    var tracking = machine()
    let iBeacon = BeaconFrame.iBeacon(TestBeacons.iBeacon)
    let noIBeacons = [everything: Self.interest(includeIBeacons: false)]
    #expect(tracking.heard(sighting(iBeacon), interests: noIBeacons, at: t0).isEmpty)
    #expect(tracking.nextLookup() == nil)
    // Nobody subscribed: nothing followed at all.
    #expect(tracking.heard(sighting(uidFrame), interests: [:], at: t0).isEmpty)
    #expect(tracking.tracker.isIdle)
    // A filter on one Eddystone namespace: the other UID is not followed.
    let filtered = [
      everything: Self.interest(filters: [try .eddystoneUID(namespaceHex: "edd1ebeac04e5defa017")])
    ]
    #expect(tracking.heard(sighting(otherFrame), interests: filtered, at: t0).isEmpty)
    #expect(!tracking.heard(sighting(uidFrame), interests: filtered, at: t0).isEmpty)
    #expect(tracking.nextLookup()?.ids == [id(uidFrame)])
    // Of two subscriptions, the one that excludes iBeacons gets no iBeacon attachment.
    let other = SubscriptionID.random()
    let both = [everything: Self.interest(includeIBeacons: false), other: Self.interest()]
    _ = tracking.heard(sighting(iBeacon, from: "IB"), interests: both, at: t0)
    let lookup = tracking.nextLookup()!
    let actions = tracking.answered(
      lookup.ids, with: [info(iBeacon, [price])], interests: both, at: t0)
    #expect(Self.found(actions) == [other: [price.message]])
  }

  @Test("an Eddystone-EID beacon keeps its attachment found across a rotation and lostAfter")
  func eidRotation() {
    var tracking = machine()
    let interests = [everything: Self.interest()]
    let first = BeaconFrame.eddystoneEID(TestBeacons.eid("0102030405060708"))
    let second = BeaconFrame.eddystoneEID(TestBeacons.eid("1112131415161718"))
    let name = "eddystone-eid!0102030405060708"
    _ = tracking.heard(sighting(first), interests: interests, at: t0)
    let lookup = tracking.nextLookup()!
    var events = tracking.answered(
      lookup.ids, with: [info(first, name: name, [menu])], interests: interests, at: t0)
    #expect(Self.found(events)[everything] == [menu.message])
    _ = tracking.nextLookup()
    // The beacon rotates; the new id is asked once and resolves to the same beacon.
    let rotated = t0 + .milliseconds(100)
    #expect(
      tracking.heard(sighting(second), interests: interests, at: rotated).contains(.startLookups))
    let rotatedLookup = tracking.nextLookup()!
    #expect(rotatedLookup.ids == [id(second)])
    events = tracking.answered(
      rotatedLookup.ids, with: [info(second, name: name, [menu])], interests: interests, at: rotated
    )
    #expect(Self.found(events).isEmpty)
    // Only the new id is heard for longer than lostAfter: the attachment stays found.
    for step in 1...15 {
      let time = rotated + .milliseconds(100 * step)
      events += tracking.heard(sighting(second), interests: interests, at: time)
      if step.isMultiple(of: 3) { events += tracking.sweep(at: time) }
    }
    #expect(Self.lost(events).isEmpty)
    #expect(Self.found(events).isEmpty)
    #expect(tracking.nextLookup() == nil)
  }

  @Test(
    "telemetry goes with its beacon's next look-up, the latest frame only; a lone TLM goes nowhere")
  func telemetryTravelsWithTheNextLookUp() throws {
    var tracking = machine(cacheTTL: .milliseconds(300))
    let interests = [everything: Self.interest()]
    let early = EddystoneTLM(
      batteryMillivolts: 2950, temperatureCelsius: 21, advertisingCount: 10, uptimeDeciseconds: 5)
    let late = EddystoneTLM(
      batteryMillivolts: 2940, temperatureCelsius: 21, advertisingCount: 99, uptimeDeciseconds: 50)
    // The TLM before its transmitter's id waits for it; a TLM-only transmitter identifies
    // nothing.
    #expect(tracking.heard(sighting(.eddystoneTLM(early)), interests: interests, at: t0).isEmpty)
    _ = tracking.heard(sighting(.eddystoneTLM(late), from: "LONE"), interests: interests, at: t0)
    _ = tracking.heard(sighting(uidFrame), interests: interests, at: t0)
    let first = tracking.nextLookup()!
    #expect(first.observations == [BeaconObservation(id: id(uidFrame), telemetry: early.frame)])
    _ = tracking.answered(first.ids, with: [info(uidFrame, [menu])], interests: interests, at: t0)
    _ = tracking.nextLookup()
    // Two newer frames while the answer is cached: only the latest travels, with the refresh.
    _ = tracking.heard(sighting(.eddystoneTLM(early)), interests: interests, at: t0)
    _ = tracking.heard(sighting(.eddystoneTLM(late)), interests: interests, at: t0)
    #expect(tracking.nextLookup() == nil)
    _ = tracking.heard(sighting(uidFrame), interests: interests, at: t0 + .milliseconds(400))
    let refresh = tracking.nextLookup()!
    #expect(refresh.observations == [BeaconObservation(id: id(uidFrame), telemetry: late.frame)])
  }

  @Test(
    "a subscription naming another project's namespace makes the cached answers be asked again, with it"
  )
  func namedNamespaceRefreshesAnswers() {
    var tracking = machine()
    let shared = BeaconAttachment(
      name: "s1", namespace: "partner.menus", type: "menu", data: Data("theirs".utf8),
      isShared: true)
    let named = SubscriptionID.random()
    let before = [everything: Self.interest()]
    _ = tracking.heard(sighting(uidFrame), interests: before, at: t0)
    var lookup = tracking.nextLookup()!
    #expect(lookup.namespacedTypes == ["*"])
    // The project's own attachments only: a shared one never reaches a subscription that
    // did not name its namespace.
    var actions = tracking.answered(
      lookup.ids, with: [info(uidFrame, [menu, shared])], interests: before, at: t0)
    #expect(Self.found(actions) == [everything: [menu.message]])
    _ = tracking.nextLookup()
    let after = [everything: Self.interest(), named: Self.interest(namespace: "partner.menus")]
    #expect(
      tracking.heard(sighting(uidFrame), interests: after, at: t0 + .milliseconds(50)) == [
        .startLookups
      ])
    lookup = tracking.nextLookup()!
    #expect(lookup.namespacedTypes == ["*", "partner.menus/*"])
    actions = tracking.answered(
      lookup.ids, with: [info(uidFrame, [menu, shared])], interests: after, at: t0)
    #expect(Self.found(actions) == [named: [shared.message]])
  }

  @Test("a forgotten subscription loses nothing when its beacon goes silent")
  func forgottenSubscription() {
    var tracking = machine()
    let other = SubscriptionID.random()
    let interests = [everything: Self.interest(), other: Self.interest()]
    _ = tracking.heard(sighting(uidFrame), interests: interests, at: t0)
    let lookup = tracking.nextLookup()!
    _ = tracking.answered(lookup.ids, with: [info(uidFrame, [menu])], interests: interests, at: t0)
    tracking.forget(other)
    let actions = tracking.sweep(at: t0 + .seconds(2))
    #expect(Self.lost(actions) == [everything: [menu.message]])
  }

  // MARK: Reading actions

  static func found(_ actions: [BeaconTracking.Action]) -> [SubscriptionID: [Message]] {
    messages(actions) { if case .found(let message) = $0 { message } else { nil } }
  }

  static func lost(_ actions: [BeaconTracking.Action]) -> [SubscriptionID: [Message]] {
    messages(actions) { if case .lost(let message) = $0 { message } else { nil } }
  }

  static func messages(
    _ actions: [BeaconTracking.Action], _ pick: (SubscriptionEvent) -> Message?
  ) -> [SubscriptionID: [Message]] {
    var result: [SubscriptionID: [Message]] = [:]
    for case .deliver(let events) in actions {
      for event in events {
        if let message = pick(event.event) {
          result[event.subscription, default: []].append(message)
        }
      }
    }
    return result
  }
}
