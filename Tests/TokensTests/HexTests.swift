import Foundation
import Testing
import Tokens

@Suite("Hex codec")
struct HexTests {
  @Test func encodesLowercaseTwoDigitsAByte() {
    #expect(Hex.encode([UInt8]()) == "")
    #expect(Hex.encode([0x00, 0x01, 0x0a, 0xab, 0xff]) == "00010aabff")
    #expect(Hex.encode("goo.gl".utf8) == "676f6f2e676c")
    let all = (0...255).map { UInt8($0) }
    #expect(Hex.encode(all) == all.map { String(format: "%02x", $0) }.joined())
  }

  @Test func decodesEitherCase() {
    #expect(Hex.decode("") == [])
    #expect(Hex.decode("00010aabff") == [0x00, 0x01, 0x0a, 0xab, 0xff])
    #expect(Hex.decode("00010AABFF") == [0x00, 0x01, 0x0a, 0xab, 0xff])
    #expect(Hex.decode("xxAbCdyy".dropFirst(2).dropLast(2)) == [0xab, 0xcd])
  }

  @Test func roundTrips() {
    var generator = SplitMix64(seed: 0x4ec5)
    for count in 0..<64 {
      let bytes = (0..<count).map { _ in UInt8.random(in: 0...255, using: &generator) }
      #expect(Hex.decode(Hex.encode(bytes)) == bytes)
      #expect(Hex.decode(Hex.encode(bytes).uppercased()) == bytes)
    }
  }

  /// Strict by default: digits only, ASCII only (fullwidth digits pass `Character.isHexDigit`).
  @Test(arguments: [
    "0", "abc", "0g", "zz", " 00", "00 ", "0x00", "00-11", "00:11", "０１", "0１", "é0", "+1",
  ])
  func strictRefuses(_ text: String) {
    #expect(Hex.decode(text) == nil)
  }

  @Test func separatorsWhenAllowed() {
    #expect(Hex.decode("0x0011", allowingSeparators: true) == [0x00, 0x11])
    #expect(Hex.decode("0X0011", allowingSeparators: true) == [0x00, 0x11])
    #expect(Hex.decode("00:11-22 33", allowingSeparators: true) == [0x00, 0x11, 0x22, 0x33])
    #expect(
      Hex.decode("e2c56db5-dffb-48d2-b060-d0f5a71096e0", allowingSeparators: true)?.count == 16)
    #expect(Hex.decode("0-0", allowingSeparators: true) == nil)  // inside a byte
    #expect(Hex.decode("001", allowingSeparators: true) == nil)  // odd
    #expect(Hex.decode("00_11", allowingSeparators: true) == nil)
    #expect(Hex.decode("０１", allowingSeparators: true) == nil)
  }

  @Test func digitValues() {
    for (offset, char) in "0123456789abcdef".utf8.enumerated() {
      #expect(Hex.value(ofDigit: char) == UInt8(offset))
    }
    for (offset, char) in "ABCDEF".utf8.enumerated() {
      #expect(Hex.value(ofDigit: char) == UInt8(10 + offset))
    }
    let digits = Set("0123456789abcdefABCDEF".utf8)
    for byte in UInt8.min...UInt8.max where !digits.contains(byte) {
      #expect(Hex.value(ofDigit: byte) == nil)
    }
  }
}
