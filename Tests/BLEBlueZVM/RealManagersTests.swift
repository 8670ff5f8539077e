import BLEBlueZ
import Core
import Foundation
import MediumTestKit
import Resolution
import Strategy
import TestSupport
import Testing
import NearbyTesting

extension RealBlueZTests {
  /// Managers (Core's manager, the Strategy, the in-process resolver) over the real bluetoothd,
  /// one BlueZ medium each on its own adapter of the VM: the seed's scenarios over real BLE.
  /// Nested in ``RealBlueZTests``: serialized with every other test on the one bluetoothd.
  @Suite struct Managers {
    /// Alice on hci0 and Bob on hci1 each publish and subscribe over BLE (both modes: each
    /// adapter advertises and scans at once) and find each other's message; they stay found
    /// past the resolver's `lostAfter` though the peers stand still; Bob's unpublish loses his
    /// message for Alice at once, and Alice's adapter going silent (her advert leaves the air,
    /// then the adapter powers off) loses hers for Bob after `lostAfter`.
    @Test func twoManagersFindAndLoseEachOther() async throws {
      try RealBlueZ.requireVM()
      let lostAfter = Duration.seconds(10)
      let resolver = try InProcessResolver(configuration: .init(lostAfter: lostAfter))
      let seen = FoundLostRecorder()
      let alice = try await VMStack.manager("hci0", resolver: resolver)
      let bob = try await VMStack.manager("hci1", resolver: resolver)
      let ble = Strategy(mediums: .ble)
      var publications: [String: Publication] = [:]
      var subscriptions: [Subscription] = []
      for (manager, name) in [(alice, "alice"), (bob, "bob")] {
        publications[name] = try await manager.publish(
          Message(text: "hello from \(name)", type: "greeting")
        ) { $0.strategy = ble }
        subscriptions.append(
          try await seen.subscribe(manager, as: name) {
            $0.type = "greeting"
            $0.strategy = ble
          })
      }
      let started = ContinuousClock.now
      #expect(
        await seen.until(timeout: .seconds(45)) {
          seen.found(by: "alice") == ["hello from bob"]
            && seen.found(by: "bob") == ["hello from alice"]
        },
        "found by alice \(seen.found(by: "alice")), by bob \(seen.found(by: "bob"))")
      let foundAfter = ContinuousClock.now - started
      // Still peers stay found past lostAfter (bluetoothd repeats nothing unchanged, findings
      // item 10).
      try await Task.sleep(for: lostAfter + .seconds(5))
      #expect(seen.lost(by: "alice").isEmpty, "alice lost \(seen.lost(by: "alice"))")
      #expect(seen.lost(by: "bob").isEmpty, "bob lost \(seen.lost(by: "bob"))")

      await publications["bob"]?.cancel()
      #expect(
        await seen.until(timeout: .seconds(20)) {
          seen.lost(by: "alice") == ["hello from bob"]
        }, "lost by alice: \(seen.lost(by: "alice"))")

      // Alice's advert leaves the air (her adapter stops advertising behind her stack's back,
      // then powers off so that nothing starts it again: power alone does not silence it in
      // the VM, finding M).
      let silenced = ContinuousClock.now
      try VMStack.stopAdvertisingBehindTheStack(on: 0)
      try await VMStack.btmgmt(0, ["power", "off"])
      #expect(
        await seen.until(timeout: lostAfter + .seconds(30)) {
          seen.lost(by: "bob") == ["hello from alice"]
        }, "lost by bob: \(seen.lost(by: "bob"))")
      let lostAfterSilence = ContinuousClock.now - silenced
      // By silence, not by an unpublish: lostAfter after the last sighting, which may be a few
      // seconds before the power went off (a still peer is re-reported every few seconds).
      #expect(lostAfterSilence >= lostAfter / 2, "lost after \(lostAfterSilence)")
      try await VMStack.btmgmt(0, ["power", "on"])
      #expect(
        await eventually(timeout: .seconds(20), interval: .milliseconds(200)) {
          (try? await VMStack.adapterProperty("Powered", of: "hci0"))?.bool == true
        }, "hci0 did not come back powered")
      print(
        "twoManagersFindAndLoseEachOther: found after \(foundAfter), lost by silence after \(lostAfterSilence)"
      )

      for subscription in subscriptions { await subscription.cancel() }
      for publication in publications.values { await publication.cancel() }
      await alice.shutdown()
      await bob.shutdown()
    }

    /// The seed's set-top box over BLE: a publication that only scans (the phone, hci0) reaches
    /// a subscription that only broadcasts (the box, hci1), not one that only scans (the
    /// speaker, a second manager on hci0: nobody broadcasts what it could hear). The phone's
    /// cancel then loses it for the box.
    @Test func scanOnlyPublicationReachesBroadcastOnlySubscription() async throws {
      try RealBlueZ.requireVM()
      let resolver = try InProcessResolver(configuration: .init(lostAfter: .seconds(10)))
      let seen = FoundLostRecorder()
      let phone = try await VMStack.manager("hci0", resolver: resolver)
      let box = try await VMStack.manager("hci1", resolver: resolver)
      let boxSubscription = try await seen.subscribe(box, as: "box") {
        $0.strategy = Strategy(mediums: .ble, mode: .broadcast)
      }
      let publication = try await phone.publish(Message(text: "Play", type: "cast")) {
        $0.strategy = Strategy(mediums: .ble, mode: .scan)
      }
      #expect(
        await seen.until(timeout: .seconds(45)) {
          seen.found(by: "box") == ["Play"]
        }, "found by the box: \(seen.found(by: "box"))")
      // The speaker joins on the phone's adapter (a second medium there) and only scans: many
      // advertising rounds later it has heard nothing it could match.
      let speaker = try await VMStack.manager("hci0", resolver: resolver)
      let speakerSubscription = try await seen.subscribe(speaker, as: "speaker") {
        $0.strategy = Strategy(mediums: .ble, mode: .scan)
      }
      try await Task.sleep(for: .seconds(10))
      #expect(seen.found(by: "speaker").isEmpty, "\(seen.found(by: "speaker"))")
      #expect(seen.lost(by: "box").isEmpty, "the box lost \(seen.lost(by: "box")) meanwhile")
      await publication.cancel()
      #expect(
        await seen.until(timeout: .seconds(20)) {
          seen.lost(by: "box") == ["Play"]
        }, "lost by the box: \(seen.lost(by: "box"))")
      for subscription in [boxSubscription, speakerSubscription] { await subscription.cancel() }
      for manager in [phone, box, speaker] { await manager.shutdown() }
    }
  }
}
