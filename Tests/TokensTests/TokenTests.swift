import Foundation
import NearbyTesting
import Testing
import Tokens

/// The RFC 4648 §5 base64url form of `bytes` without padding, via Foundation.
func foundationBase64URL(_ bytes: [UInt8]) -> String {
  Data(bytes).base64EncodedString()
    .replacingOccurrences(of: "+", with: "-")
    .replacingOccurrences(of: "/", with: "_")
    .replacingOccurrences(of: "=", with: "")
}

@Suite("Token bytes and value")
struct TokenBytesTests {
  @Test func bytesAreBigEndian() throws {
    let token = Token(value: 0x0102_0304_0506_0708)
    #expect(token.bytes == [1, 2, 3, 4, 5, 6, 7, 8])
    #expect(try Token(bytes: [1, 2, 3, 4, 5, 6, 7, 8]).value == 0x0102_0304_0506_0708)
    #expect(Token(value: 1).bytes == [0, 0, 0, 0, 0, 0, 0, 1])
    #expect(Token(value: 1 << 56).bytes == [1, 0, 0, 0, 0, 0, 0, 0])
    #expect(Token(value: .max).bytes == [UInt8](repeating: 0xff, count: 8))
    #expect(Token.byteCount == 8)
  }

  @Test func bytesRoundTrip() throws {
    for token in sampleTokens(count: 1_000, seed: 1) {
      #expect(token.bytes.count == 8)
      #expect(try Token(bytes: token.bytes) == token)
    }
  }

  @Test func acceptsAnyCollectionOfEightBytes() throws {
    let bytes: [UInt8] = [0xaa, 1, 2, 3, 4, 5, 6, 7, 8, 0xbb]
    #expect(try Token(bytes: bytes[1...8]) == Token(value: 0x0102_0304_0506_0708))
    #expect(try Token(bytes: Data([8, 7, 6, 5, 4, 3, 2, 1])).value == 0x0807_0605_0403_0201)
  }

  @Test(arguments: Array(0...7) + Array(9...32) + [1_000])
  func rejectsWrongLength(_ count: Int) {
    let bytes = [UInt8](repeating: 0x5a, count: count)
    #expect(throws: TokenError.wrongLength(count)) { try Token(bytes: bytes) }
  }

  @Test func ordersByValue() {
    let tokens = sampleTokens(count: 200, seed: 2)
    let sorted = tokens.sorted()
    #expect(sorted.map(\.value) == tokens.map(\.value).sorted())
    #expect(Token(value: 1) < Token(value: 2))
    #expect(Token(value: 0x00ff_ffff_ffff_ffff) < Token(value: 0x0100_0000_0000_0000))
  }

  @Test func randomTokensAreDistinct() {
    let draws = 10_000
    let tokens = Set((0..<draws).map { _ in Token.random() })
    #expect(tokens.count == draws)
  }

  @Test func seededRandomIsRepeatable() {
    var first = SplitMix64(seed: 42)
    var second = SplitMix64(seed: 42)
    let a = (0..<100).map { _ in Token.random(using: &first) }
    let b = (0..<100).map { _ in Token.random(using: &second) }
    #expect(a == b)
    #expect(Set(a).count == 100)
  }

  @Test func descriptionIsHex() {
    let token = Token(value: 0xdead_beef_0000_0001)
    #expect(token.description == "deadbeef00000001")
    #expect("\(token)" == token.hex)
  }
}

@Suite("Token hex")
struct TokenHexTests {
  @Test func knownValues() {
    #expect(Token(value: 0).hex == "0000000000000000")
    #expect(Token(value: 0x0102_0304_0506_0708).hex == "0102030405060708")
    #expect(Token(value: 0xdead_beef_cafe_f00d).hex == "deadbeefcafef00d")
    #expect(Token(value: .max).hex == "ffffffffffffffff")
  }

  @Test func isSixteenLowercaseDigits() {
    let allowed = Set("0123456789abcdef")
    for token in sampleTokens(count: 1_000, seed: 3) {
      let hex = token.hex
      #expect(hex.count == 16)
      #expect(hex.allSatisfy { allowed.contains($0) })
      #expect(hex == String(format: "%016llx", token.value))
    }
  }

  @Test func roundTrips() throws {
    for token in sampleTokens(count: 1_000, seed: 4) {
      #expect(try Token(hex: token.hex) == token)
      #expect(try Token(hex: token.hex.uppercased()) == token)
    }
  }

  @Test func parsesUpperAndMixedCase() throws {
    #expect(try Token(hex: "DEADBEEFCAFEF00D").value == 0xdead_beef_cafe_f00d)
    #expect(try Token(hex: "DeAdBeEfCaFeF00d").value == 0xdead_beef_cafe_f00d)
    let text = "xx0102030405060708yy"
    let slice = text.dropFirst(2).dropLast(2)
    #expect(try Token(hex: slice).value == 0x0102_0304_0506_0708)
  }

  @Test(arguments: [
    "", "0", "010203040506070", "01020304050607080", "0102030405060708 ", " 0102030405060708",
    "010203040506070g", "0x01020304050607", "01020304-5060708", "010203040506070G",
    "ffffffffffffffff0", "０１０２０３０４０５０６０７０８", "01020304050607é", "+102030405060708",
  ])
  func rejectsInvalidText(_ text: String) {
    #expect(throws: TokenError.invalidHex(text)) { try Token(hex: text) }
  }

  @Test func codableAsHex() throws {
    let token = Token(value: 0x0102_0304_0506_0708)
    let data = try JSONEncoder().encode([token])
    #expect(String(decoding: data, as: UTF8.self) == #"["0102030405060708"]"#)
    #expect(try JSONDecoder().decode([Token].self, from: data) == [token])
    let upper = try JSONDecoder().decode([Token].self, from: Data(#"["DEADBEEFCAFEF00D"]"#.utf8))
    #expect(upper == [Token(value: 0xdead_beef_cafe_f00d)])
    for token in sampleTokens(count: 200, seed: 5) {
      let encoded = try JSONEncoder().encode(token)
      #expect(try JSONDecoder().decode(Token.self, from: encoded) == token)
      #expect(try JSONDecoder().decode(String.self, from: encoded) == token.hex)
    }
  }

  @Test(arguments: [
    #"["01020304"]"#, #"["zz02030405060708"]"#, "[1234]", #"["AQIDBAUGBwg"]"#, "[null]",
  ])
  func decodingInvalidThrows(_ json: String) {
    #expect(throws: DecodingError.self) {
      try JSONDecoder().decode([Token].self, from: Data(json.utf8))
    }
  }
}

@Suite("Token base64url")
struct TokenBase64URLTests {
  @Test func knownValues() {
    #expect(Token(value: 0).base64URL == "AAAAAAAAAAA")
    #expect(Token(value: .max).base64URL == "__________8")
    #expect(Token(value: 0x0102_0304_0506_0708).base64URL == "AQIDBAUGBwg")
  }

  @Test func isElevenCharactersMatchingFoundation() {
    let alphabet = Set("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_")
    for token in sampleTokens(count: 2_000, seed: 6) {
      let text = token.base64URL
      #expect(text.count == 11)
      #expect(text.allSatisfy { alphabet.contains($0) })
      #expect(text == foundationBase64URL(token.bytes))
    }
  }

  @Test func roundTripsManyRandomTokens() throws {
    for token in sampleTokens(count: 5_000, seed: 7) {
      #expect(try Token(base64URL: token.base64URL) == token)
    }
    for _ in 0..<1_000 {
      let token = Token.random()
      #expect(try Token(base64URL: token.base64URL) == token)
    }
  }

  @Test func acceptsOneTrailingPaddingCharacter() throws {
    #expect(try Token(base64URL: "AQIDBAUGBwg=").value == 0x0102_0304_0506_0708)
    let text = "[AQIDBAUGBwg]"
    #expect(try Token(base64URL: text.dropFirst().dropLast()).value == 0x0102_0304_0506_0708)
  }

  @Test(arguments: [
    "", "AQIDBAUGBw", "AQIDBAUGBwgA", "AQIDBAUGBwg==", "AQIDBAUGBw=", "AQIDBAUGBwgAAAA",
  ])
  func rejectsWrongLength(_ text: String) {
    #expect(throws: TokenError.invalidBase64URL(text)) { try Token(base64URL: text) }
  }

  @Test(arguments: [
    "AQIDBAUG+wg", "AQIDBAUG/wg", "AQIDBAUG wg", "AQIDB=UGBwg", "AQIDBAUGBw.", "AQIDBAUGBwé",
    "=QIDBAUGBwg", "AQIDBAUGBw\n",
  ])
  func rejectsBadCharacters(_ text: String) {
    #expect(throws: TokenError.invalidBase64URL(text)) { try Token(base64URL: text) }
  }

  @Test func rejectsNonZeroPaddingBits() throws {
    // The last character carries 4 bits; its low 2 bits must be zero.
    let alphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_")
    for (sextet, char) in alphabet.enumerated() {
      let text = "AQIDBAUGBw" + String(char)
      if sextet & 0x03 == 0 {
        let token = try Token(base64URL: text)
        #expect(token.value & 0x0f == UInt64(sextet >> 2))
        #expect(token.base64URL == text)
      } else {
        #expect(throws: TokenError.invalidBase64URL(text)) { try Token(base64URL: text) }
      }
    }
  }

  @Test func errorsDescribeTheInput() {
    #expect(TokenError.wrongLength(3).description.contains("8 bytes"))
    #expect(TokenError.wrongLength(3).description.contains("3"))
    #expect(TokenError.invalidHex("xyz").description.contains("16 hex digits"))
    #expect(TokenError.invalidBase64URL("xyz").description.contains("11 characters"))
    let long = String(repeating: "z", count: 100)
    #expect(TokenError.invalidHex(long).description.count < 100)
  }
}
