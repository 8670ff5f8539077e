/// A D-Bus type: one complete type of a signature, such as `s`, `ay`, `a{sv}` or `(iu)`.
///
/// Unix file descriptors (`h`) are not supported: signatures containing them are rejected.
public enum DBusType: Sendable, Hashable {
  case byte, boolean, int16, uint16, int32, uint32, int64, uint64, double
  case string, objectPath, signature, variant
  /// `aT`: an array of elements of one type.
  indirect case array(DBusType)
  /// `a{KV}`: a dictionary; `key` is a basic type.
  indirect case dictionary(key: DBusType, value: DBusType)
  /// `(T…)`: a struct of one or more fields.
  case structure([DBusType])

  /// The longest signature D-Bus allows.
  public static let maximumSignatureLength = 255
  /// The deepest array and struct nesting D-Bus allows (each).
  public static let maximumNesting = 32

  /// The type's signature, such as `a{sv}`.
  public var signature: String {
    var out = ""
    appendSignature(to: &out)
    return out
  }

  func appendSignature(to out: inout String) {
    switch self {
    case .array(let element):
      out.append("a")
      element.appendSignature(to: &out)
    case .dictionary(let key, let value):
      out.append("a{")
      key.appendSignature(to: &out)
      value.appendSignature(to: &out)
      out.append("}")
    case .structure(let fields):
      out.append("(")
      for field in fields { field.appendSignature(to: &out) }
      out.append(")")
    default:
      out.append(Character(Unicode.Scalar(code!)))
    }
  }

  /// The type code of a basic type or variant (`nil` for containers).
  var code: UInt8? {
    switch self {
    case .byte: UInt8(ascii: "y")
    case .boolean: UInt8(ascii: "b")
    case .int16: UInt8(ascii: "n")
    case .uint16: UInt8(ascii: "q")
    case .int32: UInt8(ascii: "i")
    case .uint32: UInt8(ascii: "u")
    case .int64: UInt8(ascii: "x")
    case .uint64: UInt8(ascii: "t")
    case .double: UInt8(ascii: "d")
    case .string: UInt8(ascii: "s")
    case .objectPath: UInt8(ascii: "o")
    case .signature: UInt8(ascii: "g")
    case .variant: UInt8(ascii: "v")
    case .array, .dictionary, .structure: nil
    }
  }

  /// Whether the type is basic (may be a dictionary key).
  public var isBasic: Bool {
    switch self {
    case .variant, .array, .dictionary, .structure: false
    default: true
    }
  }

  /// Parses a signature holding exactly one complete type.
  /// - Throws: ``DBusError`` named ``DBusError/Name-swift.struct/invalidSignature`` when the
  ///   signature is malformed, holds no type or more than one, or uses `h`.
  public init(signature: String) throws(DBusError) {
    let types = try DBusType.list(signature: signature)
    guard types.count == 1 else {
      throw DBusError(
        .invalidSignature, "signature \"\(signature)\" holds \(types.count) types, expected one")
    }
    self = types[0]
  }

  /// Parses a signature of zero or more complete types, such as a message body's `sa{sv}as`.
  /// - Throws: ``DBusError`` named ``DBusError/Name-swift.struct/invalidSignature`` when it is
  ///   malformed, longer than 255 bytes, nested too deeply, or uses `h`.
  public static func list(signature: String) throws(DBusError) -> [DBusType] {
    let bytes = Array(signature.utf8)
    guard bytes.count <= maximumSignatureLength else {
      throw DBusError(
        .invalidSignature, "signature is \(bytes.count) bytes long, the limit is 255")
    }
    var parser = SignatureParser(bytes: bytes, text: signature)
    var types: [DBusType] = []
    while parser.offset < bytes.count {
      types.append(try parser.parseOne(arrays: 0, structs: 0))
    }
    return types
  }

  /// The signature of a list of types, such as a message body's.
  public static func signature(of types: [DBusType]) -> String {
    var out = ""
    for type in types { type.appendSignature(to: &out) }
    return out
  }
}

extension DBusType: CustomStringConvertible {
  public var description: String { signature }
}

/// Reads one complete type at a time from a signature's bytes.
private struct SignatureParser {
  let bytes: [UInt8]
  let text: String
  var offset = 0

  func fail(_ why: String) -> DBusError {
    DBusError(.invalidSignature, "invalid signature \"\(text)\" at byte \(offset): \(why)")
  }

  mutating func parseOne(arrays: Int, structs: Int) throws(DBusError) -> DBusType {
    guard offset < bytes.count else { throw fail("a type is missing") }
    let code = bytes[offset]
    offset += 1
    switch code {
    case UInt8(ascii: "y"): return .byte
    case UInt8(ascii: "b"): return .boolean
    case UInt8(ascii: "n"): return .int16
    case UInt8(ascii: "q"): return .uint16
    case UInt8(ascii: "i"): return .int32
    case UInt8(ascii: "u"): return .uint32
    case UInt8(ascii: "x"): return .int64
    case UInt8(ascii: "t"): return .uint64
    case UInt8(ascii: "d"): return .double
    case UInt8(ascii: "s"): return .string
    case UInt8(ascii: "o"): return .objectPath
    case UInt8(ascii: "g"): return .signature
    case UInt8(ascii: "v"): return .variant
    case UInt8(ascii: "h"): throw fail("unix file descriptors (h) are not supported")
    case UInt8(ascii: "a"):
      guard arrays < DBusType.maximumNesting else { throw fail("arrays nested deeper than 32") }
      if offset < bytes.count, bytes[offset] == UInt8(ascii: "{") {
        offset += 1
        let key = try parseOne(arrays: arrays + 1, structs: structs + 1)
        guard key.isBasic else { throw fail("a dictionary key must be a basic type") }
        let value = try parseOne(arrays: arrays + 1, structs: structs + 1)
        guard offset < bytes.count, bytes[offset] == UInt8(ascii: "}") else {
          throw fail("a dictionary entry needs exactly a key and a value, then '}'")
        }
        offset += 1
        return .dictionary(key: key, value: value)
      }
      return .array(try parseOne(arrays: arrays + 1, structs: structs))
    case UInt8(ascii: "("):
      guard structs < DBusType.maximumNesting else { throw fail("structs nested deeper than 32") }
      var fields: [DBusType] = []
      while offset < bytes.count, bytes[offset] != UInt8(ascii: ")") {
        fields.append(try parseOne(arrays: arrays, structs: structs + 1))
      }
      guard offset < bytes.count else { throw fail("a struct is not closed") }
      guard !fields.isEmpty else { throw fail("a struct needs at least one field") }
      offset += 1
      return .structure(fields)
    default:
      offset -= 1
      throw fail("unexpected character \"\(Character(Unicode.Scalar(code)))\"")
    }
  }
}
