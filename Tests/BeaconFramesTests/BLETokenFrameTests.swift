import Testing
import BeaconFrames
import NearbyTesting
import Tokens

/// The Flags AD structure most advertisements start with (LE General Discoverable, BR/EDR off).
let flagsAD: [UInt8] = [0x02, 0x01, 0x06]

/// What decoding some bytes gave: a frame or a typed error.
enum DecodeOutcome: Equatable {
  case frame(BLETokenFrame)
  case error(BLETokenFrameError)
}

func decodePayload(_ bytes: [UInt8]) -> DecodeOutcome {
  do throws(BLETokenFrameError) {
    return .frame(try BLETokenFrame(payload: bytes))
  } catch {
    return .error(error)
  }
}

func decodeAdvertisement(_ bytes: [UInt8]) -> DecodeOutcome {
  do throws(BLETokenFrameError) {
    return .frame(try BLETokenFrame(advertisement: bytes))
  } catch {
    return .error(error)
  }
}

@Suite("BLETokenFrame payload")
struct BLETokenFramePayloadTests {
  static let token = Token(value: 0x0102_0304_0506_0708)

  @Test func constants() {
    #expect(BLETokenFrame.version == 1)
    #expect(BLETokenFrame.payloadLength == 10)
    #expect(BLETokenFrame.serviceData128ADType == 0x21)
    #expect(BLETokenFrame.serviceUUIDLittleEndian.count == 16)
  }

  @Test func layout() {
    let frame = BLETokenFrame(token: Self.token, txPower: 4)
    #expect(frame.payload == [0x10, 1, 2, 3, 4, 5, 6, 7, 8, 4])
    #expect(frame.payload.count == BLETokenFrame.payloadLength)
    #expect(frame.flags == 0)
  }

  @Test func flagsKeepLowNibbleOnly() {
    let frame = BLETokenFrame(token: Self.token, txPower: 0, flags: 0x5)
    #expect(frame.payload[0] == 0x15)
    let masked = BLETokenFrame(token: Self.token, txPower: 0, flags: 0xf3)
    #expect(masked.flags == 0x03)
    #expect(masked.payload[0] == 0x13)
  }

  @Test func settingFlagsKeepsTheVersionReadable() throws {
    var frame = BLETokenFrame(token: Self.token, txPower: 0)
    frame.flags = 0x2a
    #expect(frame.flags == 0x0a)
    #expect(frame.payload[0] == 0x1a)
    #expect(try BLETokenFrame(payload: frame.payload) == frame)
  }

  static let txPowerBytes: [(txPower: Int8, byte: UInt8)] = [
    (-18, 0xee), (-1, 0xff), (-128, 0x80), (0, 0x00), (127, 0x7f), (-59, 0xc5),
  ]

  @Test(arguments: txPowerBytes)
  func txPowerIsSignedByte(_ txPower: Int8, _ byte: UInt8) throws {
    let frame = BLETokenFrame(token: Self.token, txPower: txPower)
    #expect(frame.payload[9] == byte)
    let decoded = try BLETokenFrame(payload: frame.payload)
    #expect(decoded.txPower == txPower)
    #expect(decoded == frame)
  }

  @Test func decodesKnownPayload() throws {
    let frame = try BLETokenFrame(payload: [0x1a, 0xde, 0xad, 0xbe, 0xef, 0, 0, 0, 1, 0xc5])
    #expect(frame.flags == 0x0a)
    #expect(frame.token == Token(value: 0xdead_beef_0000_0001))
    #expect(frame.txPower == -59)
  }

  @Test func roundTripsManyRandomFrames() throws {
    var generator = SplitMix64(seed: 10)
    for token in sampleTokens(count: 3_000, seed: 11) {
      let txPower = Int8.random(in: .min ... .max, using: &generator)
      let flags = UInt8.random(in: 0...0x0f, using: &generator)
      let frame = BLETokenFrame(token: token, txPower: txPower, flags: flags)
      let payload = frame.payload
      #expect(payload.count == 10)
      #expect(payload[0] == 0x10 | flags)
      #expect(Array(payload[1...8]) == token.bytes)
      #expect(payload[9] == UInt8(bitPattern: txPower))
      let decoded = try BLETokenFrame(payload: payload)
      #expect(decoded == frame)
      #expect(decoded.payload == payload)
    }
  }

  @Test func acceptsAnyCollection() throws {
    let frame = BLETokenFrame(token: Self.token, txPower: -7)
    let padded = [0xaa] + frame.payload + [0xbb]
    #expect(try BLETokenFrame(payload: padded[1...10]) == frame)
    #expect(try BLETokenFrame(payload: padded.dropFirst().dropLast()) == frame)
  }

  @Test(arguments: 0...9)
  func rejectsShortPayloads(_ count: Int) {
    let valid = BLETokenFrame(token: Self.token, txPower: -18).payload
    let bytes = Array(valid.prefix(count))
    #expect(throws: BLETokenFrameError.tooShort(count: count, expected: 10)) {
      try BLETokenFrame(payload: bytes)
    }
  }

  @Test(arguments: 11...40)
  func rejectsLongPayloads(_ count: Int) {
    let valid = BLETokenFrame(token: Self.token, txPower: -18).payload
    let bytes = valid + [UInt8](repeating: 0, count: count - valid.count)
    #expect(throws: BLETokenFrameError.tooLong(count: count, expected: 10)) {
      try BLETokenFrame(payload: bytes)
    }
  }

  @Test(arguments: [UInt8(0)] + Array(UInt8(2)...15))
  func rejectsOtherVersions(_ version: UInt8) {
    for flags in [UInt8(0), 0x0f] {
      var bytes = BLETokenFrame(token: Self.token, txPower: -18).payload
      bytes[0] = version << 4 | flags
      #expect(throws: BLETokenFrameError.unsupportedVersion(version)) {
        try BLETokenFrame(payload: bytes)
      }
    }
  }

  @Test func errorsDescribeThemselves() {
    #expect(BLETokenFrameError.tooShort(count: 3, expected: 10).description.contains("3 bytes"))
    #expect(BLETokenFrameError.tooLong(count: 12, expected: 10).description.contains("12 bytes"))
    #expect(BLETokenFrameError.unsupportedVersion(7).description.contains("version 7"))
    #expect(BLETokenFrameError.malformedADStructure(offset: 3).description.contains("byte 3"))
    #expect(BLETokenFrameError.notFound.description.contains(BLETokenFrame.serviceUUID))
  }
}

@Suite("BLETokenFrame advertisement")
struct BLETokenFrameAdvertisementTests {
  static let frame = BLETokenFrame(
    token: Token(value: 0xfeed_face_0bad_f00d), txPower: -18, flags: 0x2)

  @Test func serviceUUIDBytesReversedAreLittleEndian() throws {
    let hex = Array(BLETokenFrame.serviceUUID.filter { $0 != "-" })
    #expect(hex.count == 32)
    let bigEndian = try #require(Hex.decode(String(hex)))
    #expect(bigEndian.reversed() == BLETokenFrame.serviceUUIDLittleEndian)
    #expect(BLETokenFrame.serviceUUID == BLETokenFrame.serviceUUID.lowercased())
    let groups = BLETokenFrame.serviceUUID.split(separator: "-").map(\.count)
    #expect(groups == [8, 4, 4, 4, 12])
  }

  @Test func adStructureLayout() {
    let ad = Self.frame.adStructure
    #expect(ad.count == 28)
    #expect(ad[0] == 27)
    #expect(ad[1] == 0x21)
    #expect(Array(ad[2..<18]) == BLETokenFrame.serviceUUIDLittleEndian)
    #expect(Array(ad[18...]) == Self.frame.payload)
    #expect(Int(ad[0]) == ad.count - 1)
    #expect((flagsAD + ad).count == 31)  // fills a legacy advertisement
  }

  @Test func findsFrameAfterFlags() throws {
    let advert = flagsAD + Self.frame.adStructure
    #expect(try BLETokenFrame(advertisement: advert) == Self.frame)
    #expect(try BLETokenFrame(advertisement: advert[...]) == Self.frame)
  }

  @Test func findsFrameAloneAmongOthersAndBeforePadding() throws {
    #expect(try BLETokenFrame(advertisement: Self.frame.adStructure) == Self.frame)
    let name: [UInt8] = [0x05, 0x09] + Array("node".utf8)  // Complete Local Name
    let uuid16: [UInt8] = [0x05, 0x16, 0xaa, 0xfe, 0x10, 0x00]  // Eddystone service data
    let advert = flagsAD + name + uuid16 + Self.frame.adStructure + [0, 0, 0]
    #expect(try BLETokenFrame(advertisement: advert) == Self.frame)
  }

  @Test func zeroLengthEndsTheSignificantPart() {
    let advert = flagsAD + [0x00] + Self.frame.adStructure
    #expect(throws: BLETokenFrameError.notFound) { try BLETokenFrame(advertisement: advert) }
  }

  @Test func notFoundWithoutOurUUID() {
    var otherUUID = Self.frame.adStructure
    otherUUID[2] ^= 0xff
    var otherType = Self.frame.adStructure
    otherType[1] = 0x07  // Complete List of 128-bit Service UUIDs
    let bigEndianUUID: [UInt8] =
      [27, 0x21] + Array(BLETokenFrame.serviceUUIDLittleEndian.reversed()) + Self.frame.payload
    let adverts: [[UInt8]] = [
      [], flagsAD, flagsAD + otherUUID, flagsAD + otherType, bigEndianUUID,
      flagsAD + [0x03, 0x21, 0x82, 0x8f],  // our type, too short to hold the UUID
      [0x01, 0x21],  // type only, no data
      [0x00, 0x05, 0x21],
    ]
    for advert in adverts {
      #expect(throws: BLETokenFrameError.notFound) { try BLETokenFrame(advertisement: advert) }
    }
  }

  @Test func malformedWhenLengthRunsPastTheEnd() {
    let ad = Self.frame.adStructure
    let cases: [(advert: [UInt8], offset: Int)] = [
      ([0x05, 0x01], 0),
      ([0x01], 0),
      (flagsAD + [0x1e] + ad.dropFirst(), 3),
      (flagsAD + Array(ad.dropLast()), 3),
      (flagsAD + [0x02, 0x01], 3),
      ([0xff] + [UInt8](repeating: 0, count: 30), 0),
    ]
    for (advert, offset) in cases {
      #expect(throws: BLETokenFrameError.malformedADStructure(offset: offset)) {
        try BLETokenFrame(advertisement: advert)
      }
    }
  }

  @Test func payloadErrorsComeThroughTheAdvertisement() {
    let uuid = [0x21] + BLETokenFrame.serviceUUIDLittleEndian
    let short = flagsAD + [UInt8(uuid.count + 4)] + uuid + [0x10, 1, 2, 3]
    #expect(throws: BLETokenFrameError.tooShort(count: 4, expected: 10)) {
      try BLETokenFrame(advertisement: short)
    }
    let long = flagsAD + [UInt8(uuid.count + 11)] + uuid + Self.frame.payload + [0]
    #expect(throws: BLETokenFrameError.tooLong(count: 11, expected: 10)) {
      try BLETokenFrame(advertisement: long)
    }
    var badVersion = Self.frame.adStructure
    badVersion[18] = 0x22
    #expect(throws: BLETokenFrameError.unsupportedVersion(2)) {
      try BLETokenFrame(advertisement: flagsAD + badVersion)
    }
  }

  @Test func roundTripsThroughAdvertisements() throws {
    var generator = SplitMix64(seed: 12)
    for token in sampleTokens(count: 1_000, seed: 13) {
      let frame = BLETokenFrame(
        token: token, txPower: Int8.random(in: .min ... .max, using: &generator),
        flags: UInt8.random(in: 0...15, using: &generator))
      #expect(try BLETokenFrame(advertisement: flagsAD + frame.adStructure) == frame)
    }
  }
}

@Suite("BLETokenFrame fuzzing")
struct BLETokenFrameFuzzTests {
  /// Random bytes, 0...40 long; three in eight start from a valid frame or our UUID.
  static func randomInput(using generator: inout SplitMix64) -> [UInt8] {
    let count = Int.random(in: 0...40, using: &generator)
    var bytes = (0..<count).map { _ in UInt8.random(in: 0...255, using: &generator) }
    switch Int.random(in: 0..<8, using: &generator) {
    case 0:
      // A valid payload with one byte changed.
      bytes = BLETokenFrame(token: .random(using: &generator), txPower: -18).payload
      bytes[Int.random(in: 0..<bytes.count, using: &generator)] ^= UInt8.random(
        in: 1...255, using: &generator)
    case 1:
      // A valid advertisement, cut or extended.
      let frame = BLETokenFrame(token: .random(using: &generator), txPower: 3)
      bytes = Array((flagsAD + frame.adStructure + bytes).prefix(count))
    case 2:
      // Our UUID in a structure whose length byte is random.
      bytes =
        [UInt8.random(in: 0...40, using: &generator), 0x21]
        + BLETokenFrame.serviceUUIDLittleEndian + bytes.prefix(12)
    default:
      break
    }
    return bytes
  }

  @Test func randomPayloadsDecodeOrThrowTypedErrors() throws {
    var generator = SplitMix64(seed: 0xf00d)
    var decoded = 0
    for _ in 0..<4_000 {
      let bytes = Self.randomInput(using: &generator)
      switch decodePayload(bytes) {
      case .frame(let frame):
        decoded += 1
        #expect(bytes.count == 10)
        #expect(frame.payload == bytes)
      case .error(.tooShort(let count, let expected)):
        #expect(count == bytes.count && count < 10 && expected == 10)
      case .error(.tooLong(let count, let expected)):
        #expect(count == bytes.count && count > 10 && expected == 10)
      case .error(.unsupportedVersion(let version)):
        #expect(bytes.count == 10 && version == bytes[0] >> 4 && version != 1)
      case .error(let other):
        Issue.record("init(payload:) threw \(other) for \(bytes)")
      }
    }
    #expect(decoded > 0)
  }

  @Test func randomAdvertisementsDecodeOrThrowTypedErrors() throws {
    var generator = SplitMix64(seed: 0xbeef)
    var outcomes: [String: Int] = [:]
    for _ in 0..<4_000 {
      let bytes = Self.randomInput(using: &generator)
      switch decodeAdvertisement(bytes) {
      case .frame(let frame):
        outcomes["frame", default: 0] += 1
        // Whatever decodes re-encodes to the same payload, found in the advert.
        let payload = frame.payload
        #expect(try BLETokenFrame(payload: payload) == frame)
        let uuid = BLETokenFrame.serviceUUIDLittleEndian
        let marker = [UInt8(27), 0x21] + uuid + payload
        #expect(contains(bytes, marker), "decoded \(frame) from \(bytes)")
      case .error(.malformedADStructure(let offset)):
        outcomes["malformed", default: 0] += 1
        #expect(offset >= 0 && offset < bytes.count)
        #expect(offset + 1 + Int(bytes[offset]) > bytes.count)
      case .error(.notFound):
        outcomes["notFound", default: 0] += 1
      case .error(.tooShort), .error(.tooLong), .error(.unsupportedVersion):
        // Our UUID with a bad payload: the payload's own error comes through.
        outcomes["payload", default: 0] += 1
      }
    }
    for outcome in ["frame", "malformed", "notFound", "payload"] {
      #expect(outcomes[outcome, default: 0] > 0, "no \(outcome) outcome in \(outcomes)")
    }
  }

  /// Whether `haystack` contains `needle` as a contiguous run.
  func contains(_ haystack: [UInt8], _ needle: [UInt8]) -> Bool {
    guard needle.count <= haystack.count else { return false }
    return (0...(haystack.count - needle.count)).contains {
      Array(haystack[$0..<($0 + needle.count)]) == needle
    }
  }
}
