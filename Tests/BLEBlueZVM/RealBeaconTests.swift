import BLEBlueZ
import BlueZTestSupport
import Core
import Foundation
import MediumTestKit
import Resolution
import Strategy
import TestSupport
import Testing
import Tokens

extension RealBlueZTests {
  /// Beacons of every kind sent by hci0 through the kernel's management interface (`btmgmt
  /// add-adv`, as any other beacon would: not through bluetoothd's D-Bus API), heard by the
  /// BlueZ medium and by a manager's beacon subscription on hci1, scanning actively
  /// (discovery) and in low power (bluetoothd's advertisement monitor). btvirt's controllers
  /// offer 5 advertising instances: one per frame.
  @Suite struct Beacons {
    static let eidParameters = EddystoneEIDParameters(
      identityKey: Array(0..<16), rotationExponent: 10, clockValue: 65_280)
    static let eid = BeaconFrame.eddystoneEID(
      try! EddystoneEID(
        ephemeralID: BeaconBytes(
          try! EddystoneEIDGenerator(
            identityKey: eidParameters.identityKey,
            rotationExponent: eidParameters.rotationExponent
          ).eid(beaconTime: eidParameters.clockValue)),
        txPower: -20))
    static let tlm = BeaconFrame.eddystoneTLM(
      EddystoneTLM(
        batteryMillivolts: 3000, temperatureCelsius: 21.5, advertisingCount: 1234,
        uptimeDeciseconds: 5678))
    /// Instance n + 1 carries frames[n].
    static let frames = [
      SampleBeacons.eddystoneUID, eid, tlm, SampleBeacons.iBeacon, SampleBeacons.altBeacon,
    ]

    static func sendAll() async throws {
      await VMStack.clearAdverts()
      for (index, frame) in frames.enumerated() {
        try await VMStack.addBeacon(frame, instance: index + 1)
      }
    }

    /// Every frame is heard with its exact bytes and no signal strength (the emulated air's
    /// RSSI 127 is "unknown", findings item 8); low power scans with a monitor, not
    /// discovery; a still beacon keeps being reported (bluetoothd sends no property change
    /// for an unchanged advert, item 10).
    @Test(arguments: [false, true])
    func mediumHearsEveryKindOfBeacon(lowPower: Bool) async throws {
      try RealBlueZ.requireVM()
      try await Self.sendAll()
      let medium = try await RealBlueZ.medium("hci1")
      let heard = StreamRecorder(medium.beaconSightings)
      try await medium.startBeaconScanning(lowPower: lowPower)
      #expect(
        await eventually(timeout: .seconds(10), interval: .milliseconds(200)) {
          (try? await VMStack.adapterProperty("Discovering", of: "hci1"))?.bool == !lowPower
        }, "hci1 Discovering is not \(!lowPower) (low power scans with a monitor)")
      let started = ContinuousClock.now
      for frame in Self.frames {
        let sighting = await heard.first(timeout: .seconds(30)) { $0.frame == frame }
        #expect(sighting != nil, "no sighting of \(frame.kind) \(frame)")
        #expect(sighting.map { $0.rssi == nil } ?? true, "RSSI \(sighting?.rssi as Any)")
      }
      let allHeard = ContinuousClock.now - started
      #expect(heard.elements.allSatisfy { Self.frames.contains($0.frame) })
      // Still beacons: each still reported 12 s later (more than beaconLostAfter's 10 s).
      let later = ContinuousClock.now + .seconds(12)
      try await Task.sleep(until: later)
      for frame in Self.frames {
        let again = await heard.first(since: later, timeout: .seconds(10)) { $0.frame == frame }
        #expect(
          again != nil, "\(frame.kind) not reported again while still there (lowPower \(lowPower))")
      }
      print(
        "mediumHearsEveryKindOfBeacon(lowPower: \(lowPower)): all 5 frames heard in \(allHeard)")
      await VMStack.clearAdverts()
      await medium.shutdown()
    }

    /// A manager's beacon subscription on hci1 finds the attachments of the four beacons that
    /// identify themselves (UID, EID, iBeacon, AltBeacon; TLM identifies nothing) registered
    /// in the in-process resolver; reports no distance and no signal (the strength is
    /// unknown: nothing to estimate from); keeps them found while the beacons stand still;
    /// and loses the UID's attachment after `beaconLostAfter` once that beacon stops
    /// (`btmgmt rm-adv`), the others staying found.
    @Test(arguments: [false, true])
    func managerFindsAndLosesBeacons(lowPower: Bool) async throws {
      try RealBlueZ.requireVM()
      let resolver = try InProcessResolver()
      var attachments: [BeaconFrame: BeaconAttachment] = [:]
      for frame in Self.frames {
        guard let id = BeaconID(frame: frame) else { continue }
        let attachment = BeaconAttachment(
          name: "a", namespace: "vm", type: "menu", data: Data("\(frame.kind) menu".utf8))
        attachments[frame] = attachment
        try await resolver.registerBeacon(
          apiKey: VMStack.apiKey, id: id,
          eid: frame == Self.eid ? Self.eidParameters : nil, attachments: [attachment])
      }
      #expect(attachments.count == 4)
      let beaconLostAfter = Duration.seconds(10)
      let manager = try await VMStack.manager("hci1", resolver: resolver) {
        $0.beaconLostAfter = beaconLostAfter
      }
      let subscription = try await manager.subscribe(configure: {
        $0.deviceTypes = .bleBeacons
        $0.beaconStrategy = BeaconStrategy(lowPowerPreferred: lowPower)
      })
      let events = StreamRecorder(subscription.events)
      try await Self.sendAll()
      let started = ContinuousClock.now
      let expected = Set(attachments.values.map(\.message))
      #expect(
        await eventually(timeout: .seconds(45), interval: .milliseconds(100)) {
          Set(events.elements.compactMap(\.found)) == expected
        }, "found \(events.elements.compactMap(\.found).map(\.text))")
      let allFound = ContinuousClock.now - started
      // Still beacons stay found past beaconLostAfter.
      try await Task.sleep(for: beaconLostAfter + .seconds(5))
      #expect(
        events.elements.compactMap(\.lost).isEmpty,
        "lost while still there (lowPower \(lowPower)): \(events.elements.compactMap(\.lost).map(\.text))"
      )
      // RSSI 127 is unknown: no distance, no signal, rather than invented metres.
      #expect(
        events.elements.allSatisfy { $0.distance == nil && $0.signal == nil },
        "\(events.elements.filter { $0.distance != nil || $0.signal != nil })")

      let uid = try #require(attachments[SampleBeacons.eddystoneUID]).message
      let stopped = ContinuousClock.now
      try await VMStack.removeAdvert(1)
      #expect(
        await eventually(timeout: beaconLostAfter + .seconds(30), interval: .milliseconds(100)) {
          events.elements.compactMap(\.lost).contains(uid)
        }, "the stopped UID beacon was not lost (lowPower \(lowPower))")
      let lostIn = ContinuousClock.now - stopped
      // Lost beaconLostAfter after it was last heard, which may be a few seconds before it
      // stopped (a still beacon is re-reported every few seconds, not continuously).
      #expect(lostIn >= beaconLostAfter / 2, "lost after \(lostIn)")
      #expect(events.elements.compactMap(\.lost) == [uid])
      print(
        "managerFindsAndLosesBeacons(lowPower: \(lowPower)): 4 found in \(allFound), the stopped one lost after \(lostIn)"
      )
      await VMStack.clearAdverts()
      await subscription.cancel()
      await manager.shutdown()
    }
  }
}
