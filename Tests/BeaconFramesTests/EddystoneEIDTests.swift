import Testing
import BeaconFrames
import Tokens

@Suite("Eddystone-EID")
struct EddystoneEIDTests {
  @Test("reads the frame: type 0x30, TX power, 8-byte ephemeral id")
  func layout() throws {
    let frame = hexBytes("30 f8 0123456789abcdef")
    let eid = try EddystoneEID(frame: frame)
    #expect(eid.txPower == -8)
    #expect(eid.ephemeralID.hex == "0123456789abcdef")
    #expect(eid.frame == frame)
    let advertisement = eddystoneHeader + hexBytes("0d 16 aafe") + frame
    #expect(try BeaconFrame.frames(inAdvertisement: advertisement) == [.eddystoneEID(eid)])
    #expect(BeaconFrame.eddystoneEID(eid).advertisement == advertisement)
  }

  @Test func roundTrip() throws {
    var generator = SystemRandomNumberGenerator()
    for _ in 0..<200 {
      let id = try BeaconBytes((0..<8).map { _ in UInt8.random(in: 0...255, using: &generator) })
      let eid = try EddystoneEID(ephemeralID: id, txPower: .random(in: .min ... .max))
      #expect(try EddystoneEID(frame: eid.frame) == eid)
    }
  }

  @Test(arguments: [0, 1, 2, 9, 11, 20])
  func wrongLength(count: Int) {
    let frame = [0x30] + [UInt8](repeating: 0, count: 30)
    #expect(
      parseError { () throws(BeaconFrameError) in try EddystoneEID(frame: frame.prefix(count)) }
        == .wrongLength(.eddystoneEID, count: count, expected: 10))
  }

  @Test func wrongIDLength() throws {
    #expect(
      parseError { () throws(BeaconFrameError) in
        try EddystoneEID(ephemeralID: BeaconBytes(hex: "0102"), txPower: 0)
      } == .wrongFieldLength(field: "ephemeral id", count: 2, expected: 8))
  }
}
