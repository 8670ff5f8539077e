import ServerTestSupport
import Core
import Foundation
import Resolution
import ServerStorage
import Testing
import TestSupport

@Suite("Beacons in SQL storage")
struct BeaconStoreTests {
  @Test(.requires(.postgres), arguments: StorageKind.allCases)
  func beaconsAndAttachmentsPerProject(_ kind: StorageKind) async throws {
    let storage = try await StorageFixture.make(kind)
    try await withShutdown(storage) { storage in
      let id = try BeaconID(kind: .altBeacon, hex: String(repeating: "0f", count: 20))
      let menu = try NewAttachment(namespacedType: "cafe/menu", data: [1, 2, 3])
      let now = Date(timeIntervalSince1970: 1_800_000_000)
      let result = try await storage.transaction { store in
        let first = try store.beacons.registerBeacon(
          project: "p", advertisedID: id, description: "d", attachments: [menu], now: now)
        let twice = try store.beacons.registerBeacon(
          project: "p", advertisedID: id, description: "", attachments: [], now: now)
        let elsewhere = try store.beacons.beacons(project: "q", advertisedIDs: [id])
        let found = try store.beacons.beacons(project: "p", advertisedIDs: [id, id])
        let deleted = try store.beacons.deleteBeacon(project: "p", name: id.name)
        return (first, twice, elsewhere, found, deleted, try store.beacons.beacons(project: "p"))
      }
      #expect(result.0?.attachments.map(\.data) == [[1, 2, 3]])
      #expect(result.1 == nil)
      #expect(result.2.isEmpty)
      #expect(result.3.count == 1 && result.3[0].advertisedID == id)
      #expect(result.4)
      #expect(result.5.isEmpty)
    }
  }

  @Test(.requires(.postgres), arguments: StorageKind.allCases)
  func eidParametersRoundTripAndGoWithTheBeacon(_ kind: StorageKind) async throws {
    let storage = try await StorageFixture.make(kind)
    try await withShutdown(storage) { storage in
      let id = try BeaconID(kind: .eddystoneEID, hex: "3439c83a6564bfdf")
      let registeredAt = Date(timeIntervalSince1970: 1_800_000_000.25)
      let eid = try EddystoneEIDRegistration(
        identityKey: Array(0..<16), rotationExponent: 15, clockValue: .max,
        registeredAt: registeredAt)
      let plain = try BeaconID(kind: .altBeacon, hex: String(repeating: "0f", count: 20))
      let result = try await storage.transaction { store in
        _ = try store.beacons.registerBeacon(
          project: "p", advertisedID: plain, description: "", attachments: [], now: registeredAt)
        let registered = try store.beacons.registerBeacon(
          project: "p", advertisedID: id, description: "", eid: eid, attachments: [],
          now: registeredAt)
        return (
          registered, try store.beacons.beacons(project: "p"),
          try store.beacons.eidBeacons(project: "p"),
          try store.beacons.eidBeacons(project: "q")
        )
      }
      #expect(result.0?.eid == eid)
      #expect(result.1.map(\.eid) == [nil, eid])
      #expect(result.2.map(\.name) == ["eddystone-eid!3439c83a6564bfdf"])
      #expect(result.2.first?.registration == eid)
      #expect(result.3.isEmpty)
      let left = try await storage.transaction { store in
        _ = try store.beacons.deleteBeacon(project: "p", name: id.name)
        return try store.beacons.eidBeacons(project: "p")
      }
      #expect(left.isEmpty)
    }
  }

  @Test func attachmentLimitsAreChecked() {
    #expect(throws: BeaconInputError.self) {
      try NewAttachment(namespacedType: "a/b", data: [UInt8](repeating: 0, count: 1025))
    }
    #expect(throws: BeaconInputError.self) { try NewAttachment(namespacedType: "a b/c", data: []) }
    #expect(throws: BeaconInputError.self) { try BeaconID(kind: .eddystoneUID, hex: "zz") }
  }

  /// Fullwidth digits pass `Character.isHexDigit`; parsing them trapped (issue 13).
  @Test func hexIsParsedOverASCIIOnly() throws {
    #expect(throws: BeaconInputError.self) {
      try BeaconID(kind: .iBeacon, hex: "\u{FF10}\u{FF10}")
    }
    #expect(throws: BeaconInputError.self) {
      try BeaconID(kind: .iBeacon, hex: String(repeating: "\u{FF10}", count: 40))
    }
    #expect(throws: BeaconInputError.self) {
      try BeaconID(kind: .eddystoneEID, hex: "0011223344556６")
    }
    let upper = try BeaconID(kind: .eddystoneEID, hex: "0011AABBCCDDEEFF")
    #expect(upper.hex == "0011aabbccddeeff")
    #expect(try BeaconID(name: upper.name) == upper)
    #expect(throws: BeaconInputError.self) {
      try BeaconID(name: "eddystone-eid!0011AABBCCDDEEFF")
    }
    #expect(throws: BeaconInputError.self) { try BeaconID(name: "nope!00") }
    #expect(throws: BeaconInputError.self) { try BeaconID(name: "eddystone-eid") }
  }

  @Test func textRulesCountBytesAndRefuseControls() throws {
    _ = try NewAttachment(namespacedType: "a/" + String(repeating: "é", count: 16), data: [])
    #expect(
      throws: BeaconInputError.overLimit(
        "namespacedType's type is 34 bytes of UTF-8; the limit is 32 bytes")
    ) {
      try NewAttachment(namespacedType: "a/" + String(repeating: "é", count: 17), data: [])
    }
    let flood = "a" + String(repeating: "\u{301}", count: 1000)
    #expect(throws: BeaconInputError.self) {
      try NewAttachment(namespacedType: "a/" + flood, data: [])
    }
    #expect(throws: BeaconInputError.self) {
      try NewAttachment(namespacedType: "a/b\u{0}", data: [])
    }
    #expect(throws: BeaconInputError.self) {
      try NewAttachment(namespacedType: "a/b\u{9F}", data: [])
    }
    #expect(throws: BeaconInputError.self) {
      try TextRules.check("x\u{7F}", field: "f", maximumBytes: 8)
    }
    try TextRules.check("café ☕", field: "f", maximumBytes: 10)
    #expect(TextRules.printable("a\u{0}b") == "a\\u{0}b")
  }
}
