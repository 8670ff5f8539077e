extension Token {
  /// Crockford's base32 alphabet: no I, L, O or U, so that what a person reads is what they
  /// type.
  private static let shortCodeAlphabet = Array("0123456789ABCDEFGHJKMNPQRSTVWXYZ".utf8)

  /// The token as a person reads and types it: 13 characters of Crockford's base32 (5 bits
  /// each, the last 4), grouped `XXXX-XXXX-XXXXX`. What a device shows for the `optical`
  /// medium, beside a QR code.
  public var shortCode: String {
    var characters: [UInt8] = []
    for index in 0..<13 {
      if index == 4 || index == 8 { characters.append(UInt8(ascii: "-")) }
      let shift = 59 - 5 * index
      let digit = shift >= 0 ? (value >> UInt64(shift)) & 0x1f : (value << 1) & 0x1f
      characters.append(Self.shortCodeAlphabet[Int(digit)])
    }
    return String(decoding: characters, as: UTF8.self)
  }

  /// Reads a short code as a person typed it: case and the dashes and spaces between groups
  /// do not matter, and O reads as 0, I and L as 1.
  /// - Throws: ``TokenError/invalidShortCode(_:)`` for anything but 13 such characters whose
  ///   last one has its low bit clear.
  public init(shortCode text: some StringProtocol) throws(TokenError) {
    var value: UInt64 = 0
    var count = 0
    for byte in text.utf8 {
      if byte == UInt8(ascii: "-") || byte == UInt8(ascii: " ") { continue }
      var character = byte
      if (UInt8(ascii: "a")...UInt8(ascii: "z")).contains(character) { character -= 32 }
      switch character {
      case UInt8(ascii: "O"): character = UInt8(ascii: "0")
      case UInt8(ascii: "I"), UInt8(ascii: "L"): character = UInt8(ascii: "1")
      default: break
      }
      guard count < 13, let digit = Self.shortCodeAlphabet.firstIndex(of: character) else {
        throw .invalidShortCode(String(text))
      }
      if count < 12 {
        value = value << 5 | UInt64(digit)
      } else {
        guard digit & 1 == 0 else { throw .invalidShortCode(String(text)) }
        value = value << 4 | UInt64(digit >> 1)
      }
      count += 1
    }
    guard count == 13 else { throw .invalidShortCode(String(text)) }
    self.init(value: value)
  }
}
