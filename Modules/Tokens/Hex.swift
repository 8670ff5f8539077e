/// Hexadecimal text for bytes: the one codec the project uses for tokens, beacon ids, keys,
/// digests and log lines.
///
/// Encoding writes lowercase digits, two a byte, without separators. Decoding reads ASCII
/// digits only (`0-9`, `a-f`, `A-F`, either case): other characters Unicode counts as hex
/// digits, such as fullwidth ones that `Character.isHexDigit` accepts, are refused. All of it
/// is pure and runs on the caller's thread.
public enum Hex {
  private static let digits: [UInt8] = Array("0123456789abcdef".utf8)

  /// The bytes as lowercase hex, two digits a byte, no separators.
  public static func encode(_ bytes: some Sequence<UInt8>) -> String {
    var out: [UInt8] = []
    out.reserveCapacity(2 * bytes.underestimatedCount)
    for byte in bytes {
      out.append(digits[Int(byte >> 4)])
      out.append(digits[Int(byte & 0x0f)])
    }
    return String(decoding: out, as: UTF8.self)
  }

  /// The value (0…15) of one ASCII hex digit of either case; `nil` for any other byte.
  public static func value(ofDigit char: UInt8) -> UInt8? {
    switch char {
    case UInt8(ascii: "0")...UInt8(ascii: "9"): char - UInt8(ascii: "0")
    case UInt8(ascii: "a")...UInt8(ascii: "f"): char - UInt8(ascii: "a") + 10
    case UInt8(ascii: "A")...UInt8(ascii: "F"): char - UInt8(ascii: "A") + 10
    default: nil
    }
  }

  /// Bytes from pairs of ASCII hex digits (either case).
  ///
  /// By default the text is digits and nothing else. With `allowingSeparators`, a leading `0x`
  /// (or `0X`) and `-`, `:` or spaces between bytes are skipped, so a UUID's or a MAC
  /// address's text form reads too; a separator inside a byte is still refused.
  /// - Returns: `nil` for an odd number of digits or any other character.
  public static func decode(_ text: some StringProtocol, allowingSeparators: Bool = false)
    -> [UInt8]?
  {
    var utf8 = Substring(text).utf8[...]
    if allowingSeparators, utf8.starts(with: "0x".utf8) || utf8.starts(with: "0X".utf8) {
      utf8 = utf8.dropFirst(2)
    }
    var out: [UInt8] = []
    out.reserveCapacity(utf8.count / 2)
    var high: UInt8?
    for char in utf8 {
      guard let nibble = value(ofDigit: char) else {
        guard allowingSeparators, high == nil,
          char == UInt8(ascii: "-") || char == UInt8(ascii: ":") || char == UInt8(ascii: " ")
        else { return nil }
        continue
      }
      if let value = high {
        out.append(value << 4 | nibble)
        high = nil
      } else {
        high = nibble
      }
    }
    return high == nil ? out : nil
  }
}
