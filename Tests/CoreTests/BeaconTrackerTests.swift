import Foundation
import Testing
import Tokens

@testable import Core

/// The tracker on a replayed timeline (times given, no clock).
@Suite("BeaconTracker")
struct BeaconTrackerTests {
  let settings = BeaconTracker.Settings(
    lostAfter: .seconds(10), smoothingWindow: .seconds(5), model: PathLossModel())
  let subscription = SubscriptionID.random()
  let interest = BeaconInterest(namespace: "", type: nil, includeIBeacons: true, filters: [])
  let attachment = BeaconAttachment(name: "a", namespace: "ns", type: "t", data: Data("x".utf8))

  func eid(_ hex: String) throws -> BeaconFrame {
    .eddystoneEID(try EddystoneEID(ephemeralID: BeaconBytes(hex: hex), txPower: -20))
  }

  @Test("an EID rotation keeps the beacon's smoothing window: one outlier does not move it")
  func smoothingAcrossRotation() throws {
    var tracker = BeaconTracker(settings: settings)
    let start = ContinuousClock.now
    let first = try eid("0102030405060708")
    let second = try eid("1112131415161718")
    var events: [BeaconTracker.Event] = []
    for step in 0..<5 {
      let time = start + .milliseconds(200 * step)
      let recorded = tracker.record(
        BeaconSighting(address: "A", frame: first, rssi: -60, time: time))
      let id = try #require(recorded)
      events += tracker.apply(
        BeaconInfo(observed: id, beaconName: "eid!1", attachments: [attachment]), for: id,
        interests: [subscription: interest], now: time)
    }
    #expect(events.compactMap { if case .found(let m) = $0.event { m } else { nil } }.count == 1)
    // The beacon rotates; its first sighting under the new id is an outlier.
    let time = start + .seconds(1)
    let recorded = tracker.record(
      BeaconSighting(address: "A", frame: second, rssi: -90, time: time))
    let id = try #require(recorded)
    let after = tracker.apply(
      BeaconInfo(observed: id, beaconName: "eid!1", attachments: [attachment]), for: id,
      interests: [subscription: interest], now: time)
    // No new found, and no signal change: the median of the beacon's window is still −60.
    #expect(after.isEmpty, "\(after)")
    // Silence for longer than lostAfter: lost once.
    let lost = tracker.sweep(now: time + .seconds(11))
    #expect(lost.map(\.event) == [.lost(attachment.message)])
    #expect(tracker.isIdle)
  }
}
