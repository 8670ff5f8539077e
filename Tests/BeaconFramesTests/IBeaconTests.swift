import Testing
import BeaconFrames
import Tokens

@Suite("iBeacon")
struct IBeaconTests {
  static let uuid = try! BeaconBytes(hex: "e2c56db5-dffb-48d2-b060-d0f5a71096e0")

  @Test("reads the advertisement: 0x1A 0xFF, Apple 0x004C little-endian, 0x02 0x15, fields")
  func layout() throws {
    let data = hexBytes("0215 e2c56db5dffb48d2b060d0f5a71096e0 0010 0020 c5")
    let advertisement = hexBytes("020106 1aff 4c00") + data
    let beacon = try IBeacon(
      proximityUUID: Self.uuid, major: 16, minor: 32, measuredPower: -59)
    #expect(try IBeacon(manufacturerData: data) == beacon)
    #expect(try BeaconFrame.frames(inAdvertisement: advertisement) == [.iBeacon(beacon)])
    #expect(try BeaconFrame.parse(manufacturerData: data, companyID: 0x004c) == .iBeacon(beacon))
    #expect(beacon.manufacturerData == data)
    #expect(BeaconFrame.iBeacon(beacon).advertisement == advertisement)
    #expect(beacon.proximityUUID.uuidString == "e2c56db5-dffb-48d2-b060-d0f5a71096e0")
    #expect(BeaconFrame.iBeacon(beacon).referencePower == .atOneMetre(-59))
  }

  @Test func roundTrip() throws {
    var generator = SystemRandomNumberGenerator()
    for _ in 0..<300 {
      let uuid = try BeaconBytes((0..<16).map { _ in UInt8.random(in: 0...255, using: &generator) })
      let beacon = try IBeacon(
        proximityUUID: uuid, major: .random(in: 0 ... .max, using: &generator),
        minor: .random(in: 0 ... .max, using: &generator),
        measuredPower: .random(in: .min ... .max, using: &generator))
      #expect(try IBeacon(manufacturerData: beacon.manufacturerData) == beacon)
      #expect(
        try BeaconFrame.frames(inAdvertisement: BeaconFrame.iBeacon(beacon).advertisement)
          == [.iBeacon(beacon)])
    }
  }

  @Test("other Apple data and other companies are not beacons")
  func notIBeacon() throws {
    // Apple "nearby info" (type 0x10).
    #expect(try BeaconFrame.parse(manufacturerData: hexBytes("10020b1c"), companyID: 0x004c) == nil)
    // 0x02 0x15 from another company is not an iBeacon.
    let data = hexBytes("0215 e2c56db5dffb48d2b060d0f5a71096e0 0010 0020 c5")
    #expect(try BeaconFrame.parse(manufacturerData: data, companyID: 0x0059) == nil)
    #expect(try BeaconFrame.parse(manufacturerData: [0x02], companyID: 0x004c) == nil)
    #expect(try BeaconFrame.parse(manufacturerData: [], companyID: 0x004c) == nil)
  }

  @Test("an iBeacon prefix with the wrong length is a typed error", arguments: [2, 3, 22, 24])
  func wrongLength(count: Int) {
    let data = [0x02, 0x15] + [UInt8](repeating: 0, count: 30)
    #expect(
      parseError { () throws(BeaconFrameError) in
        try BeaconFrame.parse(manufacturerData: data.prefix(count), companyID: 0x004c)
      } == .wrongLength(.iBeacon, count: count, expected: 23))
  }

  @Test func wrongUUIDLength() throws {
    #expect(
      parseError { () throws(BeaconFrameError) in
        try IBeacon(proximityUUID: BeaconBytes(hex: "01"), major: 0, minor: 0, measuredPower: 0)
      } == .wrongFieldLength(field: "proximity UUID", count: 1, expected: 16))
  }
}
