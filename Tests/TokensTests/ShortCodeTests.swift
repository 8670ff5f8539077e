import Foundation
import Testing
import Tokens

/// A token as a person reads and types it (the `optical` medium): Crockford's base32, read
/// back whatever the case and the dashes, confusable letters taken for digits.
@Suite("Short codes")
struct ShortCodeTests {
  @Test func everyTokenReadsBackFromItsCode() throws {
    var generator = SplitMix64(seed: 40)
    for value in [0, 1, UInt64.max, 0x0123_4567_89ab_cdef]
      + (0..<2000).map({ _ in generator.next() })
    {
      let token = Token(value: value)
      let code = token.shortCode
      #expect(code.count == 15, "\(code)")
      #expect(code.split(separator: "-").map(\.count) == [4, 4, 5], "\(code)")
      #expect(try Token(shortCode: code) == token)
      #expect(
        try Token(shortCode: code.lowercased().replacingOccurrences(of: "-", with: " ")) == token)
    }
    #expect(Token(value: 0).shortCode == "0000-0000-00000")
    #expect(Token(value: .max).shortCode == "ZZZZ-ZZZZ-ZZZZY")
    // The page's decoder (Tools/web-client/app.js, tokenOfCode) reads this one as this token.
    #expect(Token(value: 0x0123_4567_89ab_cdef).shortCode == "04HM-ASW9-NF6YY")
  }

  @Test func confusableLettersReadAsDigits() throws {
    let token = try Token(shortCode: "0000-0000-00010")
    #expect(try Token(shortCode: "oOoO-0000-000I0") == token)
    #expect(try Token(shortCode: "0000 0000 000l0") == token)
  }

  @Test func whatIsNotACodeIsRefusedByName() {
    for text in [
      "", "0000-0000-0000", "0000-0000-000000", "0000-0000-0000U", "0000-0000-00001",
      "0000-0000-0000!", "ZZZZ-ZZZZ-ZZZZZ",
    ] {
      #expect(throws: TokenError.invalidShortCode(text)) { try Token(shortCode: text) }
    }
    #expect("\(TokenError.invalidShortCode("x"))".contains("XXXX-XXXX-XXXXX"))
  }
}
