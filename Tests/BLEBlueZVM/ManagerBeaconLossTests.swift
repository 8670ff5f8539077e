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

extension RealBlueZTests.Beacons {
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
      await events.until(timeout: .seconds(45)) {
        Set($0.compactMap(\.found)) == expected
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
      await events.until(timeout: beaconLostAfter + .seconds(30)) {
        $0.compactMap(\.lost).contains(uid)
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
