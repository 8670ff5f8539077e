/// Why a token could not be made from the given input.
public enum TokenError: Error, Sendable, Hashable {
  /// A token is exactly 8 bytes; this many were given.
  case wrongLength(Int)
  /// Not 16 hex digits.
  case invalidHex(String)
  /// Not 11 base64url characters.
  case invalidBase64URL(String)
  /// Not a short code: 13 characters of Crockford's base32, dashes aside.
  case invalidShortCode(String)
}

extension TokenError: CustomStringConvertible {
  public var description: String {
    switch self {
    case .wrongLength(let count): "a token is 8 bytes, got \(count)"
    case .invalidHex(let text): "a token in hex is 16 hex digits, got \"\(text.prefix(40))\""
    case .invalidBase64URL(let text):
      "a token in base64url is 11 characters [A-Za-z0-9-_], got \"\(text.prefix(40))\""
    case .invalidShortCode(let text):
      "a token's short code is 13 characters of 0-9 and A-Z but I, L, O, U (XXXX-XXXX-XXXXX), "
        + "got \"\(text.prefix(40))\""
    }
  }
}
