import Testing
import BeaconFrames
import Tokens

/// Every Eddystone reader goes through one header check: the length first, then the frame
/// type, then (telemetry) the version.
@Suite("Eddystone frame header")
struct EddystoneHeaderTests {
  enum Reader: String, CaseIterable {
    case uid, url, tlm, encryptedTLM, eid

    /// The frame type byte and a length the reader accepts.
    var frameType: UInt8 {
      switch self {
      case .uid: 0x00
      case .url: 0x10
      case .tlm, .encryptedTLM: 0x20
      case .eid: 0x30
      }
    }

    var length: Int {
      switch self {
      case .uid: 20
      case .url: 3
      case .tlm: 14
      case .encryptedTLM: 18
      case .eid: 10
      }
    }

    /// What the reader throws for `frame`; `nil` when it reads it.
    func error(_ frame: [UInt8]) -> BeaconFrameError? {
      parseError { () throws(BeaconFrameError) in
        switch self {
        case .uid: _ = try EddystoneUID(frame: frame)
        case .url: _ = try EddystoneURL(frame: frame)
        case .tlm: _ = try EddystoneTLM(frame: frame)
        case .encryptedTLM: _ = try EddystoneEncryptedTLM(frame: frame)
        case .eid: _ = try EddystoneEID(frame: frame)
        }
      }
    }
  }

  @Test func theLengthIsCheckedBeforeTheType() {
    let short: [UInt8] = [0x40, 0]
    #expect(Reader.uid.error(short) == .wrongLength(.eddystoneUID, count: 2, expected: 20))
    #expect(Reader.url.error(short) == .urlFrameLength(count: 2))
    #expect(Reader.tlm.error(short) == .wrongLength(.eddystoneTLM, count: 2, expected: 14))
    #expect(
      Reader.encryptedTLM.error(short) == .wrongLength(.eddystoneTLM, count: 2, expected: 18))
    #expect(Reader.eid.error(short) == .wrongLength(.eddystoneEID, count: 2, expected: 10))
    #expect(
      Reader.url.error([0x10, 0, 0] + [UInt8](repeating: 0x2e, count: 18))
        == .urlFrameLength(count: 21))
  }

  @Test(arguments: Reader.allCases)
  func anotherFrameTypeIsNamed(_ reader: Reader) {
    var frame = [UInt8](repeating: 0, count: reader.length)
    frame[0] = 0x40
    #expect(reader.error(frame) == .unknownEddystoneFrameType(0x40))
    frame[0] = reader.frameType
    if reader == .encryptedTLM { frame[1] = 0x01 }
    #expect(reader.error(frame) == nil)
  }

  @Test(arguments: [Reader.tlm, .encryptedTLM])
  func theTypeIsCheckedBeforeTheVersion(_ reader: Reader) {
    var frame = [UInt8](repeating: 0x07, count: reader.length)
    frame[0] = 0x30
    #expect(reader.error(frame) == .unknownEddystoneFrameType(0x30))
    frame[0] = 0x20
    #expect(reader.error(frame) == .unknownTLMVersion(0x07))
  }

  @Test func aLegacyUIDFrameHasNoReservedBytes() throws {
    let legacy = try EddystoneUID(frame: [0x00, 0xf0] + [UInt8](repeating: 1, count: 16))
    #expect(legacy.reserved == nil)
    #expect(
      Reader.uid.error([0x00, 0xf0] + [UInt8](repeating: 1, count: 17))
        == .wrongLength(.eddystoneUID, count: 19, expected: 20))
  }
}
