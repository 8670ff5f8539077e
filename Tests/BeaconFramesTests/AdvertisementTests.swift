import Testing

@testable import BeaconFrames
import Tokens

@Suite("Advertising payloads and BlueZ entries")
struct AdvertisementTests {
  static let uid = try! EddystoneUID(
    namespace: BeaconBytes(hex: "00112233445566778899"), instance: BeaconBytes(hex: "aabbccddeeff"),
    txPower: -20)

  @Test("several beacons in one payload come out in order; other structures are skipped")
  func severalFrames() throws {
    let eid = try EddystoneEID(ephemeralID: BeaconBytes(hex: "0102030405060708"), txPower: 0)
    let payload =
      hexBytes("020106") + hexBytes("0509") + Array("Name".utf8)  // a name
      + [UInt8(Self.uid.frame.count + 3), 0x16, 0xaa, 0xfe] + Self.uid.frame
      + hexBytes("05 16 0d18 0102")  // service data for another UUID (0x180D)
      + [UInt8(eid.frame.count + 3), 0x16, 0xaa, 0xfe] + eid.frame
      + hexBytes("05 ff 4c00 1005")  // Apple, not an iBeacon
    #expect(
      try BeaconFrame.frames(inAdvertisement: payload) == [
        .eddystoneUID(Self.uid), .eddystoneEID(eid),
      ])
  }

  @Test("forEach visits what frames collects, and stops at a malformed structure")
  func visit() throws {
    let eid = try EddystoneEID(ephemeralID: BeaconBytes(hex: "0102030405060708"), txPower: 0)
    let payload =
      BeaconFrame.eddystoneUID(Self.uid).advertisement + BeaconFrame.eddystoneEID(eid).advertisement
    var visited: [BeaconFrame] = []
    try BeaconFrame.forEach(inAdvertisement: payload) { visited.append($0) }
    #expect(visited == [.eddystoneUID(Self.uid), .eddystoneEID(eid)])
    #expect(try BeaconFrame.frames(inAdvertisement: payload) == visited)
    visited = []
    let error = parseError { () throws(BeaconFrameError) in
      try BeaconFrame.forEach(
        inAdvertisement: BeaconFrame.eddystoneUID(Self.uid).advertisement + [5, 0x16]
      ) {
        visited.append($0)
      }
    }
    #expect(error == .truncatedADStructure(offset: 31, length: 5, available: 1))
    #expect(visited == [.eddystoneUID(Self.uid)])
  }

  @Test("a payload without beacons gives none; zero padding ends the payload")
  func noBeacons() throws {
    #expect(
      try BeaconFrame.frames(inAdvertisement: hexBytes("020106 0509") + Array("Name".utf8)) == [])
    #expect(try BeaconFrame.frames(inAdvertisement: []) == [])
    #expect(try BeaconFrame.frames(inAdvertisement: hexBytes("020106 00 ffffffff")) == [])
  }

  @Test("Eddystone under a 32-bit or 128-bit service-data UUID in the Bluetooth base range")
  func longUUIDs() throws {
    let frame = Self.uid.frame
    let uuid32 = [UInt8(frame.count + 5), 0x20, 0xaa, 0xfe, 0x00, 0x00] + frame
    #expect(try BeaconFrame.frames(inAdvertisement: uuid32) == [.eddystoneUID(Self.uid)])
    // 0000feaa-0000-1000-8000-00805f9b34fb, little-endian.
    let uuid128 = hexBytes("fb349b5f80000080 00100000 aafe0000")
    #expect(
      try BeaconFrame.frames(inAdvertisement: [UInt8(frame.count + 17), 0x21] + uuid128 + frame)
        == [.eddystoneUID(Self.uid)])
    // Another 128-bit UUID is not Eddystone.
    var other = uuid128
    other[0] ^= 1
    #expect(
      try BeaconFrame.frames(inAdvertisement: [UInt8(frame.count + 17), 0x21] + other + frame) == []
    )
  }

  @Test("malformed AD structures are typed errors naming the offset")
  func malformedStructures() {
    #expect(
      parseError { () throws(BeaconFrameError) in
        try BeaconFrame.frames(inAdvertisement: hexBytes("020106 0aff 4c00"))
      } == .truncatedADStructure(offset: 3, length: 10, available: 3))
    #expect(
      parseError { () throws(BeaconFrameError) in
        try BeaconFrame.frames(inAdvertisement: hexBytes("02"))
      } == .truncatedADStructure(offset: 0, length: 2, available: 0))
    #expect(
      parseError { () throws(BeaconFrameError) in
        try BeaconFrame.frames(inAdvertisement: hexBytes("020106 0216aa"))
      } == .adStructureTooShort(offset: 3, type: 0x16, length: 1, minimum: 2))
    #expect(
      parseError { () throws(BeaconFrameError) in
        try BeaconFrame.frames(inAdvertisement: hexBytes("01ff"))
      } == .adStructureTooShort(offset: 0, type: 0xff, length: 0, minimum: 2))
    #expect(
      parseError { () throws(BeaconFrameError) in
        try BeaconFrame.frames(inAdvertisement: hexBytes("0521aabbccdd"))
      } == .adStructureTooShort(offset: 0, type: 0x21, length: 4, minimum: 16))
    #expect(
      parseError { () throws(BeaconFrameError) in
        try BeaconFrame.frames(inAdvertisement: hexBytes("0320aafe"))
      } == .adStructureTooShort(offset: 0, type: 0x20, length: 2, minimum: 4))
  }

  @Test("a malformed beacon inside a payload is its frame's error")
  func malformedBeacon() {
    #expect(
      parseError { () throws(BeaconFrameError) in
        try BeaconFrame.frames(inAdvertisement: hexBytes("0316aafe"))
      } == .emptyEddystoneFrame)
    #expect(
      parseError { () throws(BeaconFrameError) in
        try BeaconFrame.frames(inAdvertisement: hexBytes("0516aafe4000"))
      } == .unknownEddystoneFrameType(0x40))
  }

  @Test(
    "service data keyed the way BlueZ and people write the UUID",
    arguments: [
      "0000feaa-0000-1000-8000-00805f9b34fb", "0000FEAA-0000-1000-8000-00805F9B34FB",
      "feaa", "0xFEAA", "0000feaa",
    ])
  func serviceDataKeys(uuid: String) throws {
    #expect(
      try BeaconFrame.parse(serviceData: Self.uid.frame, uuid: uuid) == .eddystoneUID(Self.uid))
  }

  @Test("service data for other UUIDs is no beacon; bad UUID text is a typed error")
  func otherServiceData() throws {
    #expect(
      try BeaconFrame.parse(
        serviceData: Self.uid.frame, uuid: "0000180d-0000-1000-8000-00805f9b34fb")
        == nil)
    #expect(
      try BeaconFrame.parse(
        serviceData: Self.uid.frame, uuid: "ad1cf74e-c1af-499e-bb67-00374f1e8f82")
        == nil)
    #expect(try BeaconFrame.parse(serviceData: Self.uid.frame, uuid: "1000feaa") == nil)
    for text in [
      "", "fea", "feaaa", "zzzz", "+eaa", "0000feaa-0000-1000-8000-00805f9b34f",
      "0000feaa00001000800000805f9b34fbff",
    ] {
      #expect(
        parseError { () throws(BeaconFrameError) in
          try BeaconFrame.parse(serviceData: Self.uid.frame, uuid: text)
        } == .invalidUUID(text))
    }
    #expect(
      parseError { () throws(BeaconFrameError) in
        try BeaconFrame.parse(serviceData: [], uuid: "feaa")
      }
        == .emptyEddystoneFrame)
  }

  @Test func uuidStrings() throws {
    #expect(ADStructure.uuidString(0xfeaa) == "0000feaa-0000-1000-8000-00805f9b34fb")
    #expect(try ADStructure.uuid16(ADStructure.uuidString(0x0001)) == 0x0001)
  }

  @Test("the built advertisement of every kind fits a legacy 31-byte advertisement")
  func advertisementSizes() throws {
    let url = try EddystoneURL(url: "https://www." + String(repeating: "a", count: 17), txPower: 0)
    let frames: [BeaconFrame] = [
      .eddystoneUID(Self.uid), .eddystoneURL(url),
      .eddystoneTLM(
        EddystoneTLM(
          batteryMillivolts: 1, temperatureRaw: 0, advertisingCount: 0, uptimeDeciseconds: 0)),
      .eddystoneEncryptedTLM(
        try EddystoneEncryptedTLM(
          encrypted: BeaconBytes(hex: "000102030405060708090a0b"), salt: BeaconBytes(hex: "0000"),
          mic: BeaconBytes(hex: "0000"))),
      .eddystoneEID(
        try EddystoneEID(ephemeralID: BeaconBytes(hex: "0001020304050607"), txPower: 0)),
      .iBeacon(
        try IBeacon(
          proximityUUID: BeaconBytes(hex: "000102030405060708090a0b0c0d0e0f"), major: 1, minor: 2,
          measuredPower: -60)),
      .altBeacon(
        try AltBeacon(
          companyID: 0x0118, beaconID: BeaconBytes(hex: "000102030405060708090a0b0c0d0e0f10111213"),
          referenceRSSI: -60)),
    ]
    #expect(Set(frames.map(\.kind)) == Set(BeaconKind.allCases))
    for frame in frames {
      #expect(frame.advertisement.count <= 31)
      #expect(try BeaconFrame.frames(inAdvertisement: frame.advertisement) == [frame])
      if let data = frame.serviceData {
        #expect(
          try BeaconFrame.parse(serviceData: data, uuid: ADStructure.uuidString(0xfeaa)) == frame)
      }
      if let (companyID, data) = frame.manufacturerData {
        #expect(try BeaconFrame.parse(manufacturerData: data, companyID: companyID) == frame)
      }
    }
  }

  @Test("non-contiguous input (a lazy collection) parses like an array")
  func nonContiguous() throws {
    let advertisement = BeaconFrame.eddystoneUID(Self.uid).advertisement
    let lazy = advertisement.lazy.map { $0 }
    #expect(try BeaconFrame.frames(inAdvertisement: lazy) == [.eddystoneUID(Self.uid)])
  }
}

@Suite("BeaconBytes")
struct BeaconBytesTests {
  @Test func storesUpToTwentyBytes() throws {
    for count in 0...20 {
      let bytes = (0..<count).map { UInt8(0xa0 + $0) }
      let value = try BeaconBytes(bytes)
      #expect(value.count == count)
      #expect(value.bytes == bytes)
      #expect(Array(value) == bytes)
      #expect(try BeaconBytes(hex: value.hex) == value)
    }
    #expect(
      parseError { () throws(BeaconFrameError) in try BeaconBytes([UInt8](repeating: 0, count: 21))
      }
        == .tooManyBytes(count: 21, maximum: 20))
  }

  @Test("a buffer's run of 0 to 20 bytes reads as the same value as the bytes themselves")
  func readsFromABuffer() throws {
    let framed: [UInt8] = [0xff] + (0..<20).map { UInt8(0xa0 + $0) } + [0xee]
    for count in 0...20 {
      let read = framed.withUnsafeBufferPointer { BeaconBytes($0, from: 1, count: count) }
      #expect(read == (try BeaconBytes(framed[1..<(1 + count)])))
      #expect(Array(read) == Array(framed[1..<(1 + count)]))
    }
  }

  // Beacon ids travel through the manager's async paths: no 16-byte-aligned storage, which
  // Swift 6.3's optimized async frames under-align (docs/design.md, "The release-build crash").
  @Test("a value needs no more than a pointer's alignment")
  func alignment() {
    #expect(MemoryLayout<BeaconBytes>.alignment <= MemoryLayout<UInt64>.alignment)
  }

  @Test("equality counts the length: 00 is not 0000")
  func lengthMatters() throws {
    #expect(try BeaconBytes([0]) != BeaconBytes([0, 0]))
  }

  @Test func hexForms() throws {
    let uuid = try BeaconBytes(hex: "0xE2C56DB5-DFFB-48D2-B060-D0F5A71096E0")
    #expect(uuid.hex == "e2c56db5dffb48d2b060d0f5a71096e0")
    #expect(uuid.uuidString == "e2c56db5-dffb-48d2-b060-d0f5a71096e0")
    #expect(try BeaconBytes(hex: "01 02:03").bytes == [1, 2, 3])
    #expect(try BeaconBytes(hex: "0102").uuidString == nil)
    for bad in ["0", "zz", "0 1", "012"] {
      #expect(
        parseError { () throws(BeaconFrameError) in try BeaconBytes(hex: bad) } == .invalidHex(bad))
    }
  }
}
