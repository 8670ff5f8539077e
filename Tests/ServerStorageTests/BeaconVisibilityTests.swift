import Core
import Foundation
import Resolution
import Testing

@testable import ServerStorage

/// The visibility rule of `beaconinfo:getforobserved` as a value: what a project sees of the
/// beacons it observed, its own and other projects'. No database: records in, records out.
@Suite("Which beacons and attachments a project sees")
struct BeaconVisibilityTests {
  let created = Date(timeIntervalSince1970: 1_800_000_000)
  let a = try! BeaconID(kind: .altBeacon, hex: String(repeating: "0a", count: 20))
  let b = try! BeaconID(kind: .altBeacon, hex: String(repeating: "0b", count: 20))
  let eid = try! BeaconID(kind: .eddystoneEID, hex: "3439c83a6564bfdf")
  let registeredEID = try! BeaconID(kind: .eddystoneEID, hex: "0102030405060708")

  func attachment(_ namespace: String, _ type: String) -> AttachmentRecord {
    AttachmentRecord(
      name: "\(namespace)-\(type)", namespace: namespace, type: type, data: [1],
      createdAt: created)
  }

  func beacon(_ project: String, _ id: BeaconID, _ attachments: [AttachmentRecord])
    -> BeaconRecord
  {
    var record = BeaconRecord(
      project: project, advertisedID: id, description: "secret place", createdAt: created,
      attachments: attachments)
    record.metadata.place = "back office"
    return record
  }

  @Test("its own beacons whole, with the attachments its filters match")
  func ownBeacons() {
    let mine = beacon("p", a, [attachment("menu", "soup"), attachment("menu", "wine")])
    let visible = BeaconVisibility.visible(
      observed: [a], own: [a: mine], foreign: [], filters: NamespacedTypeFilter(["menu/soup"]))
    #expect(visible.count == 1)
    #expect(visible.first?.isOwn == true)
    #expect(visible.first?.beacon.description == "secret place")
    #expect(visible.first?.beacon.metadata.place == "back office")
    #expect(visible.first?.beacon.attachments.map(\.type) == ["soup"])
    #expect(visible.first?.sharedAttachments.isEmpty == true)
  }

  @Test("another project's beacon: only its public, matching attachments, named as observed")
  func anotherProjectsBeacon() throws {
    // Registered with another id (an EID beacon): seen by the rotating id observed.
    let theirs = beacon(
      "q", registeredEID,
      [attachment("public", "soup"), attachment("public", "wine"), attachment("private", "x")])
    let visible = BeaconVisibility.visible(
      observed: [eid], own: [:],
      foreign: [.init(namespaces: ["public"], beacons: [eid: theirs])],
      filters: NamespacedTypeFilter(["public/soup", "private/x"]))
    let seen = try #require(visible.first)
    #expect(visible.count == 1 && !seen.isOwn)
    #expect(seen.beacon.advertisedID == eid && seen.beacon.name == eid.name)
    #expect(seen.beacon.description.isEmpty && seen.beacon.eid == nil)
    #expect(seen.beacon.metadata == BeaconMetadata() && seen.beacon.attachments.isEmpty)
    #expect(seen.sharedAttachments.map(\.namespacedType) == ["public/soup"])
  }

  @Test("a beacon neither its own nor sharing a matching attachment is absent")
  func nothingToSee() {
    let theirs = beacon("q", b, [attachment("public", "wine")])
    let visible = BeaconVisibility.visible(
      observed: [a, b], own: [:],
      foreign: [.init(namespaces: ["public"], beacons: [b: theirs])],
      filters: NamespacedTypeFilter(["public/soup"]))
    #expect(visible.isEmpty)
  }

  @Test("its own beacon with other projects' shared attachments after its own, in their order")
  func ownAndShared() {
    let mine = beacon("p", a, [attachment("menu", "soup")])
    let fromQ = beacon("q", a, [attachment("q-public", "soup")])
    let fromR = beacon("r", a, [attachment("r-public", "soup")])
    let visible = BeaconVisibility.visible(
      observed: [b, a], own: [a: mine],
      foreign: [
        .init(namespaces: ["q-public"], beacons: [a: fromQ]),
        .init(namespaces: ["r-public"], beacons: [a: fromR]),
      ],
      filters: NamespacedTypeFilter(["*"]))
    #expect(visible.map(\.observedID) == [a])
    #expect(visible.first?.beacon.attachments.map(\.namespace) == ["menu"])
    #expect(visible.first?.sharedAttachments.map(\.namespace) == ["q-public", "r-public"])
  }
}
