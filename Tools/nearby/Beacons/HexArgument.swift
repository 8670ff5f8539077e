import ArgumentParser
import Tokens

/// Hex text from the command line, checked with a message that points at the problem.
enum HexArgument {
  /// Bytes from hex digits (either case); a leading `0x` and `:`, `-` or spaces between
  /// bytes are allowed.
  /// - Throws: `ValidationError` naming the option, the bad character and its position, or the
  ///   odd number of digits.
  static func bytes(_ text: String, option: String) throws -> [UInt8] {
    var body = Substring(text)
    if body.hasPrefix("0x") || body.hasPrefix("0X") { body = body.dropFirst(2) }
    var out: [UInt8] = []
    var high: UInt8?
    var digits = 0
    for (position, character) in body.enumerated() {
      if character == ":" || character == "-" || character == " " {
        guard high == nil else {
          throw ValidationError(
            "\(option): separator \"\(character)\" inside a byte at character "
              + "\(position + 1) of \"\(text)\"")
        }
        continue
      }
      guard let ascii = character.asciiValue, let nibble = Hex.value(ofDigit: ascii) else {
        throw ValidationError(
          "\(option): \"\(character)\" at character \(position + 1) of \"\(text)\" is not a "
            + "hex digit")
      }
      digits += 1
      if let value = high {
        out.append(value << 4 | nibble)
        high = nil
      } else {
        high = nibble
      }
    }
    guard high == nil else {
      throw ValidationError(
        "\(option): \(digits) hex digits in \"\(text)\"; bytes need an even number")
    }
    guard !out.isEmpty else { throw ValidationError("\(option): no bytes given") }
    return out
  }

  /// Splits `KEY=HEX`.
  static func keyAndBytes(_ text: String, option: String, key: String) throws -> (
    key: Substring, bytes: [UInt8]
  ) {
    guard let equals = text.firstIndex(of: "=") else {
      throw ValidationError("\(option) takes \(key)=HEX, got \"\(text)\"")
    }
    return (text[..<equals], try bytes(String(text[text.index(after: equals)...]), option: option))
  }
}
