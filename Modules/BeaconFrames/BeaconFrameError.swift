import Tokens

/// Why bytes are not a valid beacon frame, or why a frame cannot be built.
///
/// Every case names what is wrong (which field, which byte, which length) so that the message
/// alone lets a user fix the input.
public enum BeaconFrameError: Error, Sendable, Hashable {
  /// An AD structure's length byte runs past the end of the advertising payload.
  case truncatedADStructure(offset: Int, length: Int, available: Int)
  /// An AD structure too short for its type (service data without a whole UUID, manufacturer
  /// data without a company identifier).
  case adStructureTooShort(offset: Int, type: UInt8, length: Int, minimum: Int)
  /// A frame of `kind` whose length is not the one its specification gives.
  case wrongLength(BeaconKind, count: Int, expected: Int)
  /// An Eddystone-URL frame outside 3…20 bytes.
  case urlFrameLength(count: Int)
  /// Eddystone service data with no frame type byte.
  case emptyEddystoneFrame
  /// An Eddystone frame type this code does not know (it reads 0x00 UID, 0x10 URL, 0x20 TLM,
  /// 0x30 EID).
  case unknownEddystoneFrameType(UInt8)
  /// An Eddystone-TLM version other than 0x00 (plain) or 0x01 (encrypted).
  case unknownTLMVersion(UInt8)
  /// An Eddystone-URL scheme prefix byte other than 0x00…0x03.
  case unknownURLScheme(UInt8)
  /// A byte of an encoded URL in a reserved range (0x0E…0x20, 0x7F…0xFF); `offset` is its
  /// position in the frame.
  case reservedURLByte(UInt8, offset: Int)
  /// A URL that does not start with one of the four Eddystone schemes (http://www.,
  /// https://www., http://, https://).
  case unsupportedURLScheme(String)
  /// A URL character Eddystone-URL cannot carry (only printable US-ASCII, 0x21…0x7E).
  case unencodableURLCharacter(Character)
  /// A URL whose encoding after the scheme is longer than the 17 bytes a frame holds.
  case urlTooLong(encodedLength: Int, maximum: Int)
  /// A field given with the wrong number of bytes when building a frame.
  case wrongFieldLength(field: String, count: Int, expected: Int)
  /// More than ``BeaconBytes/maximumCount`` bytes for a ``BeaconBytes``.
  case tooManyBytes(count: Int, maximum: Int)
  /// Text that is not an even number of hex digits.
  case invalidHex(String)
  /// Text that is not a Bluetooth UUID (4 or 8 hex digits, optionally `0x`-prefixed, or a
  /// 128-bit UUID as 8-4-4-4-12 hex digits).
  case invalidUUID(String)
}

extension BeaconFrameError: CustomStringConvertible {
  public var description: String {
    switch self {
    case .truncatedADStructure(let offset, let length, let available):
      "malformed advertisement: the AD structure at byte \(offset) declares \(length) bytes but "
        + "only \(available) follow"
    case .adStructureTooShort(let offset, let type, let length, let minimum):
      "malformed advertisement: the AD structure of type \(hexByte(type)) at byte \(offset) "
        + "holds \(length) bytes, at least \(minimum) needed"
    case .wrongLength(let kind, let count, let expected):
      if kind == .eddystoneUID {
        "\(kind) frame of \(count) bytes: expected \(expected) (or 18 for a legacy frame)"
      } else {
        "\(kind) frame of \(count) bytes: expected \(expected)"
      }
    case .urlFrameLength(let count):
      "eddystone-url frame of \(count) bytes: expected 3 to 20"
    case .emptyEddystoneFrame:
      "empty Eddystone service data: no frame type byte"
    case .unknownEddystoneFrameType(let type):
      "unknown Eddystone frame type \(hexByte(type)) (known: 0x00 UID, 0x10 URL, 0x20 TLM, "
        + "0x30 EID)"
    case .unknownTLMVersion(let version):
      "unknown Eddystone-TLM version \(hexByte(version)) (known: 0x00 plain, 0x01 encrypted)"
    case .unknownURLScheme(let scheme):
      "unknown Eddystone-URL scheme prefix \(hexByte(scheme)) (known: 0x00…0x03)"
    case .reservedURLByte(let byte, let offset):
      "Eddystone-URL byte \(hexByte(byte)) at offset \(offset) is reserved "
        + "(0x0e…0x20 and 0x7f…0xff are not used)"
    case .unsupportedURLScheme(let url):
      "the URL \"\(url.prefix(60))\" does not start with http://, https://, http://www. or "
        + "https://www."
    case .unencodableURLCharacter(let character):
      "Eddystone-URL cannot carry the character \(character.debugDescription) "
        + "(only printable US-ASCII)"
    case .urlTooLong(let encodedLength, let maximum):
      "the URL encodes to \(encodedLength) bytes after its scheme; a frame holds \(maximum)"
    case .wrongFieldLength(let field, let count, let expected):
      "\(field) must be \(expected) bytes, got \(count)"
    case .tooManyBytes(let count, let maximum):
      "a beacon byte field holds at most \(maximum) bytes, got \(count)"
    case .invalidHex(let text):
      "not an even number of hex digits: \"\(text.prefix(60))\""
    case .invalidUUID(let text):
      "not a Bluetooth UUID (4 or 8 hex digits, or 8-4-4-4-12): \"\(text.prefix(60))\""
    }
  }
}

/// `0x` and two lowercase hex digits.
func hexByte(_ byte: UInt8) -> String { "0x" + Hex.encode(CollectionOfOne(byte)) }
