import Core
import Foundation
import ResolverAPI
@_spi(Resolver) import ResolverWire
import Testing
import Tokens
import BeaconFrames

@Suite("Beacon wire conversions")
struct BeaconConversionTests {
  static let ids: [BeaconID] = [
    .eddystoneUID(
      namespace: try! BeaconBytes(hex: "0102030405060708090a"),
      instance: try! BeaconBytes(hex: "aabbccddeeff")),
    .eddystoneEID(try! BeaconBytes(hex: "3439c83a6564bfdf")),
    .iBeacon(uuid: try! BeaconBytes(hex: String(repeating: "ab", count: 16)), major: 1, minor: 258),
    .altBeacon(try! BeaconBytes(hex: String(repeating: "0f", count: 20))),
  ]

  @Test(arguments: ids)
  func anObservedIDSurvivesTheWire(_ id: BeaconID) throws {
    let wire = Components.Schemas.AdvertisedID(id)
    #expect(wire._type.rawValue == id.kindName)
    #expect(wire.id == id.hex)
    #expect(try wire.beaconID() == id)
  }

  @Test func aWrongLengthNamesTheField() {
    #expect(throws: WireError.self) {
      try Components.Schemas.AdvertisedID(_type: .eddystoneEid, id: "abcd").beaconID(
        field: "observedId")
    }
  }

  @Test func aBeaconBecomesTheInfoOfItsObservation() throws {
    let json = """
      {"beaconName": "eddystone-eid!3439c83a6564bfdf",
       "advertisedId": {"type": "eddystone-eid", "id": "3439c83a6564bfdf"},
       "attachments": [{"attachmentName": "a1", "namespacedType": "cafe/menu", "data": "AQI="}]}
      """
    let beacon = try JSONDecoder().decode(Components.Schemas.Beacon.self, from: Data(json.utf8))
    let observed = Self.ids[1]
    #expect(
      try beacon.beaconInfo(observed: observed)
        == BeaconInfo(
          observed: observed, beaconName: "eddystone-eid!3439c83a6564bfdf",
          attachments: [
            BeaconAttachment(name: "a1", namespace: "cafe", type: "menu", data: Data([1, 2]))
          ]))
  }
}
