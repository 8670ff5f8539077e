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
import NearbyTesting
import BeaconFrames

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
      // The recorder waits for a report that arrives after `later`, so at most 12 + 10 s.
      let later = ContinuousClock.now + .seconds(12)
      for frame in Self.frames {
        let again = await heard.first(
          since: later, timeout: later - ContinuousClock.now + .seconds(10)
        ) { $0.frame == frame }
        #expect(
          again != nil, "\(frame.kind) not reported again while still there (lowPower \(lowPower))")
      }
      print(
        "mediumHearsEveryKindOfBeacon(lowPower: \(lowPower)): all 5 frames heard in \(allHeard)")
      await VMStack.clearAdverts()
      await medium.shutdown()
    }
  }
}
