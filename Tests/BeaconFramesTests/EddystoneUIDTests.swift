import Testing
import BeaconFrames
import Tokens

@Suite("Eddystone-UID")
struct EddystoneUIDTests {
  static let namespace = try! BeaconBytes(hex: "00112233445566778899")
  static let instance = try! BeaconBytes(hex: "aabbccddeeff")

  @Test("reads every field of a 20-byte frame, big-endian as the specification lays it out")
  func layout() throws {
    // Frame type 0x00, TX power 0xEE (-18 dBm, the specification's own example), namespace,
    // instance, two reserved bytes.
    let frame = hexBytes("00 ee 00112233445566778899 aabbccddeeff 0000")
    let uid = try EddystoneUID(frame: frame)
    #expect(uid.txPower == -18)
    #expect(uid.namespace == Self.namespace)
    #expect(uid.instance == Self.instance)
    #expect(uid.reserved == 0)
    #expect(uid.frame == frame)
  }

  @Test("reads the legacy 18-byte frame and rebuilds it without reserved bytes")
  func legacy() throws {
    let frame = hexBytes("00 12 00112233445566778899 aabbccddeeff")
    let uid = try EddystoneUID(frame: frame)
    #expect(uid.txPower == 18)
    #expect(uid.reserved == nil)
    #expect(uid.frame == frame)
  }

  @Test("keeps non-zero reserved bytes as sent")
  func reservedKept() throws {
    let uid = try EddystoneUID(frame: hexBytes("00 00 00112233445566778899 aabbccddeeff 0102"))
    #expect(uid.reserved == 0x0102)
  }

  @Test("the whole advertisement: Service Data length 0x17 under 0xFEAA")
  func inAdvertisement() throws {
    let advertisement =
      eddystoneHeader + hexBytes("17 16 aafe 00 ee 00112233445566778899 aabbccddeeff 0000")
    let frames = try BeaconFrame.frames(inAdvertisement: advertisement)
    let uid = try EddystoneUID(namespace: Self.namespace, instance: Self.instance, txPower: -18)
    #expect(frames == [.eddystoneUID(uid)])
    #expect(BeaconFrame.eddystoneUID(uid).advertisement == advertisement)
    #expect(advertisement.count == 31)
  }

  @Test(arguments: [-128, -100, -18, -1, 0, 18, 20, 127] as [Int8])
  func roundTrip(txPower: Int8) throws {
    for reserved in [0, nil, 0xffff] as [UInt16?] {
      let uid = try EddystoneUID(
        namespace: Self.namespace, instance: Self.instance, txPower: txPower, reserved: reserved)
      #expect(try EddystoneUID(frame: uid.frame) == uid)
      #expect(try Eddystone.parse(frame: uid.frame) == .eddystoneUID(uid))
    }
  }

  @Test("wrong lengths and field sizes are typed errors", arguments: [0, 1, 2, 17, 19, 21, 40])
  func wrongLength(count: Int) {
    let frame = [0] + [UInt8](repeating: 0x41, count: max(0, count - 1))
    #expect(
      parseError { () throws(BeaconFrameError) in try EddystoneUID(frame: frame.prefix(count)) }
        == .wrongLength(.eddystoneUID, count: count, expected: 20))
  }

  @Test func wrongFrameTypeAndFields() throws {
    #expect(
      parseError { () throws(BeaconFrameError) in
        try EddystoneUID(frame: [0x10] + [UInt8](repeating: 0, count: 19))
      } == .unknownEddystoneFrameType(0x10))
    #expect(
      parseError { () throws(BeaconFrameError) in
        try EddystoneUID(namespace: Self.instance, instance: Self.instance, txPower: 0)
      } == .wrongFieldLength(field: "namespace", count: 6, expected: 10))
    #expect(
      parseError { () throws(BeaconFrameError) in
        try EddystoneUID(namespace: Self.namespace, instance: Self.namespace, txPower: 0)
      } == .wrongFieldLength(field: "instance", count: 10, expected: 6))
  }

  @Test func errorMessageNamesTheLegacyLength() {
    let error = BeaconFrameError.wrongLength(.eddystoneUID, count: 5, expected: 20)
    #expect(
      error.description == "eddystone-uid frame of 5 bytes: expected 20 (or 18 for a legacy frame)")
  }
}
