/// An 8-byte rotating token that stands for a device on the air.
///
/// Tokens are issued by the resolver from a CSPRNG and rotated at least every 15 minutes.
/// Text forms: 16 lowercase hex digits (``hex``) and 11 base64url characters without padding
/// (``base64URL``). Encoded in JSON as its hex form.
public struct Token: Sendable, Hashable, Comparable {
  /// The token's 8 bytes as a big-endian integer (byte 0 is the most significant).
  public let value: UInt64

  /// The number of bytes in a token.
  public static let byteCount = 8

  /// A token with the given big-endian value.
  public init(value: UInt64) { self.value = value }

  /// A token from exactly 8 bytes.
  /// - Throws: ``TokenError/wrongLength(_:)`` when `bytes` is not 8 bytes long.
  public init(bytes: some Collection<UInt8>) throws(TokenError) {
    guard bytes.count == Self.byteCount else { throw .wrongLength(bytes.count) }
    self.value = bytes.reduce(0) { ($0 << 8) | UInt64($1) }
  }

  #if !hasFeature(Embedded)
    /// A fresh token from the system's cryptographically secure generator (getrandom(2)).
    public static func random() -> Token {
      var generator = SystemRandomNumberGenerator()
      return random(using: &generator)
    }
  #endif

  /// A token from the given generator (tests pass a seeded one).
  public static func random(using generator: inout some RandomNumberGenerator) -> Token {
    Token(value: generator.next())
  }

  /// The 8 bytes, most significant first.
  public var bytes: [UInt8] {
    (0..<Self.byteCount).map { UInt8(truncatingIfNeeded: value >> (56 - 8 * UInt64($0))) }
  }

  public static func < (lhs: Token, rhs: Token) -> Bool { lhs.value < rhs.value }
}

extension Token {
  /// 16 lowercase hex digits.
  public var hex: String { Hex.encode(bytes) }

  /// Parses 16 hex digits (either case).
  /// - Throws: ``TokenError/invalidHex(_:)`` for any other text.
  public init(hex text: some StringProtocol) throws(TokenError) {
    guard text.utf8.count == 2 * Self.byteCount, let bytes = Hex.decode(text),
      let token = try? Token(bytes: bytes)
    else { throw .invalidHex(String(text)) }
    self = token
  }

  private static let base64URLAlphabet = Array(
    "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_".utf8)

  /// 11 base64url characters (RFC 4648 §5), without padding.
  public var base64URL: String {
    // 64 bits = 10 groups of 6 bits + 4 bits; the last character carries 4 bits, low 2 zero.
    var out = [UInt8]()
    out.reserveCapacity(11)
    for index in 0..<10 {
      out.append(Self.base64URLAlphabet[Int((value >> (58 - 6 * UInt64(index))) & 0x3f)])
    }
    out.append(Self.base64URLAlphabet[Int((value & 0x0f) << 2)])
    return String(decoding: out, as: UTF8.self)
  }

  /// Parses 11 base64url characters without padding (a trailing `=` is accepted).
  /// - Throws: ``TokenError/invalidBase64URL(_:)`` for anything else, including non-zero
  ///   padding bits.
  public init(base64URL text: some StringProtocol) throws(TokenError) {
    var utf8 = Array(text.utf8)
    if utf8.last == UInt8(ascii: "=") { utf8.removeLast() }
    guard utf8.count == 11 else { throw .invalidBase64URL(String(text)) }
    var value: UInt64 = 0
    for (index, char) in utf8.enumerated() {
      guard let sextet = Self.base64URLAlphabet.firstIndex(of: char) else {
        throw .invalidBase64URL(String(text))
      }
      if index < 10 {
        value = (value << 6) | UInt64(sextet)
      } else {
        guard sextet & 0x03 == 0 else { throw .invalidBase64URL(String(text)) }
        value = (value << 4) | UInt64(sextet >> 2)
      }
    }
    self.value = value
  }
}

extension Token: CustomStringConvertible {
  public var description: String { hex }
}

// Embedded Swift (the web page's modem, compiled from this file) has no Codable.
#if !hasFeature(Embedded)
  extension Token: Codable {
    public init(from decoder: any Decoder) throws {
      let container = try decoder.singleValueContainer()
      let text = try container.decode(String.self)
      do {
        self = try Token(hex: text)
      } catch {
        throw DecodingError.dataCorruptedError(in: container, debugDescription: "\(error)")
      }
    }

    public func encode(to encoder: any Encoder) throws {
      var container = encoder.singleValueContainer()
      try container.encode(hex)
    }
  }
#endif
