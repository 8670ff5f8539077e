/// A D-Bus value of any supported type: the typed model messages are encoded from and decoded
/// into.
///
/// Arrays and dictionaries carry their element types, so an empty one still has a signature.
/// A byte array (`ay`) is always decoded as ``bytes(_:)``; ``array(_:_:)`` with element type
/// ``DBusType/byte`` encodes the same way. Dictionaries keep their entries in wire order.
public enum DBusValue: Sendable, Hashable {
  case byte(UInt8)
  case boolean(Bool)
  case int16(Int16)
  case uint16(UInt16)
  case int32(Int32)
  case uint32(UInt32)
  case int64(Int64)
  case uint64(UInt64)
  case double(Double)
  /// A string; it must not contain NUL (encoding refuses it).
  case string(String)
  case objectPath(DBusObjectPath)
  case signature(DBusSignature)
  /// `ay`, the common byte array.
  case bytes([UInt8])
  /// `aT`: elements, all of type `element` (checked when encoded).
  case array(DBusType, [DBusValue])
  /// `a{KV}`: entries whose keys are of type `key` and values of type `value`.
  case dictionary(key: DBusType, value: DBusType, [DBusDictEntry])
  /// `(…)`: one or more fields.
  case structure([DBusValue])
  /// `v`: any value, with its type on the wire.
  indirect case variant(DBusValue)

  /// The value's type.
  public var type: DBusType {
    switch self {
    case .byte: .byte
    case .boolean: .boolean
    case .int16: .int16
    case .uint16: .uint16
    case .int32: .int32
    case .uint32: .uint32
    case .int64: .int64
    case .uint64: .uint64
    case .double: .double
    case .string: .string
    case .objectPath: .objectPath
    case .signature: .signature
    case .bytes: .array(.byte)
    case .array(let element, _): .array(element)
    case .dictionary(let key, let value, _): .dictionary(key: key, value: value)
    case .structure(let fields): .structure(fields.map(\.type))
    case .variant: .variant
    }
  }
}

/// One entry of a ``DBusValue/dictionary(key:value:_:)``.
public struct DBusDictEntry: Sendable, Hashable {
  public var key: DBusValue
  public var value: DBusValue
  public init(_ key: DBusValue, _ value: DBusValue) {
    self.key = key
    self.value = value
  }
}

// MARK: - Making common values

extension DBusValue {
  /// An `a{sv}` dictionary (the shape of property maps and option maps), entries sorted by key.
  public static func vardict(_ entries: [String: DBusValue]) -> DBusValue {
    .dictionary(
      key: .string, value: .variant,
      entries.sorted { $0.key < $1.key }.map { DBusDictEntry(.string($0.key), .variant($0.value)) })
  }

  /// An `as` array.
  public static func strings(_ values: [String]) -> DBusValue {
    .array(.string, values.map(DBusValue.string))
  }

  /// An `ao` array.
  public static func objectPaths(_ values: [DBusObjectPath]) -> DBusValue {
    .array(.objectPath, values.map(DBusValue.objectPath))
  }
}

// MARK: - Reading values

extension DBusValue {
  /// The value inside a variant, or the value itself when it is not a variant.
  public var unwrapped: DBusValue {
    if case .variant(let inner) = self { return inner.unwrapped }
    return self
  }

  /// The string of a `s`, `o` or `g` value.
  public var string: String? {
    switch unwrapped {
    case .string(let text): text
    case .objectPath(let path): path.rawValue
    case .signature(let signature): signature.rawValue
    default: nil
    }
  }

  /// The path of an `o` value.
  public var objectPath: DBusObjectPath? {
    if case .objectPath(let path) = unwrapped { return path }
    return nil
  }

  /// The value of a `b` value.
  public var bool: Bool? {
    if case .boolean(let value) = unwrapped { return value }
    return nil
  }

  /// The bytes of an `ay` value.
  public var bytes: [UInt8]? {
    switch unwrapped {
    case .bytes(let bytes): return bytes
    case .array(.byte, let elements):
      var out: [UInt8] = []
      out.reserveCapacity(elements.count)
      for element in elements {
        guard case .byte(let byte) = element else { return nil }
        out.append(byte)
      }
      return out
    default: return nil
    }
  }

  /// Any integer value (`y n q i u x t`, not `b`) as an `Int64`; `nil` for other types and for
  /// a `t` above `Int64.max`.
  public var integer: Int64? {
    switch unwrapped {
    case .byte(let value): Int64(value)
    case .int16(let value): Int64(value)
    case .uint16(let value): Int64(value)
    case .int32(let value): Int64(value)
    case .uint32(let value): Int64(value)
    case .int64(let value): value
    case .uint64(let value): Int64(exactly: value)
    default: nil
    }
  }

  /// The value of a `d` value.
  public var double: Double? {
    if case .double(let value) = unwrapped { return value }
    return nil
  }

  /// The elements of an array (`ay` gives ``byte(_:)`` elements).
  public var elements: [DBusValue]? {
    switch unwrapped {
    case .array(_, let elements): elements
    case .bytes(let bytes): bytes.map(DBusValue.byte)
    default: nil
    }
  }

  /// The fields of a struct.
  public var fields: [DBusValue]? {
    if case .structure(let fields) = unwrapped { return fields }
    return nil
  }

  /// The entries of a dictionary, in wire order.
  public var entries: [DBusDictEntry]? {
    if case .dictionary(_, _, let entries) = unwrapped { return entries }
    return nil
  }

  /// A dictionary with string keys (`a{sX}`, `a{oX}`) as a Swift dictionary; values keep their
  /// variants unwrapped. A key seen twice keeps its last value.
  public var stringDictionary: [String: DBusValue]? {
    guard let entries else { return nil }
    var out: [String: DBusValue] = [:]
    out.reserveCapacity(entries.count)
    for entry in entries {
      guard let key = entry.key.string else { return nil }
      out[key] = entry.value.unwrapped
    }
    return out
  }

  /// A dictionary with integer keys (such as BlueZ's `ManufacturerData`, `a{qv}`), values
  /// unwrapped from their variants.
  public var integerDictionary: [Int64: DBusValue]? {
    guard let entries else { return nil }
    var out: [Int64: DBusValue] = [:]
    for entry in entries {
      guard let key = entry.key.integer else { return nil }
      out[key] = entry.value.unwrapped
    }
    return out
  }
}

extension DBusValue: CustomStringConvertible {
  /// A compact rendering for logs, close to `busctl`'s: `s "text"`, `ay 3 0x01 0x02 0x03`.
  public var description: String {
    switch self {
    case .byte(let value): "\(value)"
    case .boolean(let value): "\(value)"
    case .int16(let value): "\(value)"
    case .uint16(let value): "\(value)"
    case .int32(let value): "\(value)"
    case .uint32(let value): "\(value)"
    case .int64(let value): "\(value)"
    case .uint64(let value): "\(value)"
    case .double(let value): "\(value)"
    case .string(let value): "\"\(value)\""
    case .objectPath(let path): path.rawValue
    case .signature(let signature): signature.rawValue
    case .bytes(let bytes): "[" + bytes.map { hex($0) }.joined(separator: " ") + "]"
    case .array(_, let elements): "[" + elements.map(\.description).joined(separator: ", ") + "]"
    case .dictionary(_, _, let entries):
      "{" + entries.map { "\($0.key): \($0.value)" }.joined(separator: ", ") + "}"
    case .structure(let fields): "(" + fields.map(\.description).joined(separator: ", ") + ")"
    case .variant(let inner): "<\(inner.type.signature) \(inner)>"
    }
  }
}

private func hex(_ byte: UInt8) -> String {
  let digits = Array("0123456789abcdef")
  return String([digits[Int(byte >> 4)], digits[Int(byte & 0x0f)]])
}
