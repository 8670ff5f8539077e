import Testing
import BeaconFrames
import Tokens

@Suite("AltBeacon")
struct AltBeaconTests {
  static let beaconID = try! BeaconBytes(hex: "2f234454cf6d4a0fadf2f4911ba9ffa6 0001 0002")

  @Test("reads the advertisement: 0x1B 0xFF, company little-endian, 0xBEAC, id, RSSI, reserved")
  func layout() throws {
    // Radius Networks (0x0118) as the specification's reference scripts use.
    let data = hexBytes("beac 2f234454cf6d4a0fadf2f4911ba9ffa600010002 c5 00")
    let advertisement = hexBytes("020106 1bff 1801") + data
    let beacon = try AltBeacon(companyID: 0x0118, beaconID: Self.beaconID, referenceRSSI: -59)
    #expect(try BeaconFrame.frames(inAdvertisement: advertisement) == [.altBeacon(beacon)])
    #expect(try AltBeacon(companyID: 0x0118, manufacturerData: data) == beacon)
    #expect(beacon.manufacturerData == data)
    #expect(BeaconFrame.altBeacon(beacon).advertisement == advertisement)
    #expect(beacon.id1.uuidString == "2f234454-cf6d-4a0f-adf2-f4911ba9ffa6")
    #expect(beacon.id2 == 1)
    #expect(beacon.id3 == 2)
    #expect(beacon.manufacturerReserved == 0)
    #expect(BeaconFrame.altBeacon(beacon).referencePower == .atOneMetre(-59))
  }

  @Test("any company may send an AltBeacon, Apple included; the reserved byte is kept")
  func anyCompany() throws {
    let data = hexBytes("beac 2f234454cf6d4a0fadf2f4911ba9ffa600010002 bb 7f")
    let frame = try #require(try BeaconFrame.parse(manufacturerData: data, companyID: 0x004c))
    guard case .altBeacon(let beacon) = frame else {
      Issue.record("expected an AltBeacon, got \(frame)")
      return
    }
    #expect(beacon.companyID == 0x004c)
    #expect(beacon.referenceRSSI == -69)
    #expect(beacon.manufacturerReserved == 0x7f)
  }

  @Test func roundTrip() throws {
    var generator = SystemRandomNumberGenerator()
    for _ in 0..<300 {
      let id = try BeaconBytes((0..<20).map { _ in UInt8.random(in: 0...255, using: &generator) })
      let beacon = try AltBeacon(
        companyID: .random(in: 0 ... .max, using: &generator), beaconID: id,
        referenceRSSI: .random(in: .min ... .max, using: &generator),
        manufacturerReserved: .random(in: 0 ... .max, using: &generator))
      #expect(
        try BeaconFrame.frames(inAdvertisement: BeaconFrame.altBeacon(beacon).advertisement)
          == [.altBeacon(beacon)])
    }
  }

  @Test("the beacon code with the wrong length is a typed error", arguments: [2, 3, 23, 25])
  func wrongLength(count: Int) {
    let data = [0xbe, 0xac] + [UInt8](repeating: 0, count: 30)
    #expect(
      parseError { () throws(BeaconFrameError) in
        try BeaconFrame.parse(manufacturerData: data.prefix(count), companyID: 0x0118)
      } == .wrongLength(.altBeacon, count: count, expected: 24))
  }

  @Test func wrongIDLength() throws {
    #expect(
      parseError { () throws(BeaconFrameError) in
        try AltBeacon(companyID: 1, beaconID: BeaconBytes(hex: "0102"), referenceRSSI: 0)
      } == .wrongFieldLength(field: "beacon id", count: 2, expected: 20))
  }
}
