import Foundation
import Testing
import Tokens

@testable import Core
import BeaconFrames

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
    let start = NearbyClock.Instant(offset: .seconds(100))
    let first = try eid("0102030405060708")
    let second = try eid("1112131415161718")
    var events: [BeaconTracker.Event] = []
    for step in 0..<5 {
      let time = start + .milliseconds(200 * step)
      let recorded = tracker.record(
        BeaconSighting(address: "A", frame: first, rssi: -60), at: time)
      let id = try #require(recorded)
      events += tracker.apply(
        BeaconInfo(observed: id, beaconName: "eid!1", attachments: [attachment]), for: id,
        interests: [subscription: interest], now: time)
    }
    #expect(events.compactMap { if case .found(let m) = $0.event { m } else { nil } }.count == 1)
    // The beacon rotates; its first sighting under the new id is an outlier.
    let time = start + .seconds(1)
    let recorded = tracker.record(
      BeaconSighting(address: "A", frame: second, rssi: -90), at: time)
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

  @Test("an attachment with a range: found within it, lost past the margin, no flapping")
  func attachmentRange() throws {
    var tracker = BeaconTracker(
      settings: .init(lostAfter: .seconds(10), smoothingWindow: .seconds(1), model: PathLossModel())
    )
    let ranged = BeaconAttachment(
      name: "r", namespace: "ns", type: "t", data: Data("near".utf8), maxDistance: 2)
    #expect(ranged.leaveDistance == 3)
    let frame = try eid("0102030405060708")
    let start = NearbyClock.Instant(offset: .seconds(100))
    // TX power −20 dBm at 0 m: −61 dBm at 1 m; free space: −69 dBm ≈ 2.5 m, −75 dBm ≈ 5 m,
    // −65 dBm ≈ 1.6 m. One sample every 2 s, a 1 s window: each distance is the last sample's.
    var kinds: [String] = []
    for (step, rssi) in [-61, -69, -75, -69, -65].enumerated() {
      let time = start + .seconds(2 * step)
      let recorded = tracker.record(
        BeaconSighting(address: "A", frame: frame, rssi: rssi), at: time)
      let id = try #require(recorded)
      let events = tracker.apply(
        BeaconInfo(observed: id, beaconName: "eid!1", attachments: [ranged]), for: id,
        interests: [subscription: interest], now: time)
      kinds.append(
        events.compactMap {
          switch $0.event {
          case .found: "found"
          case .lost: "lost"
          default: nil
          }
        }.joined(separator: ","))
    }
    // 1 m: found; 2.5 m: kept (inside the 3 m margin); 5 m: lost; 2.5 m: not found again
    // (not within 2 m); 1.6 m: found.
    #expect(kinds == ["found", "", "lost", "", "found"])
    // No distance at all (no RSSI): never found.
    var blind = BeaconTracker(settings: settings)
    let recorded = blind.record(
      BeaconSighting(address: "B", frame: frame, rssi: nil), at: start)
    let id = try #require(recorded)
    let events = blind.apply(
      BeaconInfo(observed: id, beaconName: "eid!2", attachments: [ranged]), for: id,
      interests: [subscription: interest], now: start)
    #expect(events.isEmpty)
  }
}
