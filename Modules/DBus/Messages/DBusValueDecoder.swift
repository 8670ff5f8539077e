import CDBus

/// Reads ``DBusValue``s out of a libdbus message iterator. libdbus has already validated the
/// message; what this refuses is what the value model does not hold (unix file descriptors).
enum DBusValueDecoder {
  /// Reads every argument from `iter` to the end.
  static func decodeAll(
    _ iter: UnsafeMutablePointer<DBusMessageIter>, types: [DBusType]? = nil
  ) throws(DBusError) -> [DBusValue] {
    var values: [DBusValue] = []
    if let types { values.reserveCapacity(types.count) }
    var index = 0
    while dbus_message_iter_get_arg_type(iter) != 0 {
      let known = types.flatMap { index < $0.count ? $0[index] : nil }
      values.append(try decode(iter, known: known))
      dbus_message_iter_next(iter)
      index += 1
    }
    return values
  }

  /// Reads the argument `iter` points at.
  /// `known` is the argument's type when the caller knows it from an enclosing signature; it
  /// spares asking libdbus for (and parsing) the signature of arrays.
  static func decode(_ iter: UnsafeMutablePointer<DBusMessageIter>, known: DBusType? = nil)
    throws(DBusError) -> DBusValue
  {
    let code = dbus_message_iter_get_arg_type(iter)
    switch code {
    case 121:  // y
      var v: UInt8 = 0
      dbus_message_iter_get_basic(iter, &v)
      return .byte(v)
    case 98:  // b
      var v: dbus_bool_t = 0
      dbus_message_iter_get_basic(iter, &v)
      return .boolean(v != 0)
    case 110:  // n
      var v: Int16 = 0
      dbus_message_iter_get_basic(iter, &v)
      return .int16(v)
    case 113:  // q
      var v: UInt16 = 0
      dbus_message_iter_get_basic(iter, &v)
      return .uint16(v)
    case 105:  // i
      var v: Int32 = 0
      dbus_message_iter_get_basic(iter, &v)
      return .int32(v)
    case 117:  // u
      var v: UInt32 = 0
      dbus_message_iter_get_basic(iter, &v)
      return .uint32(v)
    case 120:  // x
      var v: Int64 = 0
      dbus_message_iter_get_basic(iter, &v)
      return .int64(v)
    case 116:  // t
      var v: UInt64 = 0
      dbus_message_iter_get_basic(iter, &v)
      return .uint64(v)
    case 100:  // d
      var v: Double = 0
      dbus_message_iter_get_basic(iter, &v)
      return .double(v)
    case 115:  // s
      return .string(readString(iter))
    case 111:  // o
      return .objectPath(DBusObjectPath(unchecked: readString(iter)))
    case 103:  // g
      let text = readString(iter)
      guard let signature = try? DBusSignature(text) else {
        throw DBusError(.invalidArgs, "a signature value \"\(text)\" uses an unsupported type")
      }
      return .signature(signature)
    case 118:  // v
      var sub = DBusMessageIter()
      dbus_message_iter_recurse(iter, &sub)
      return .variant(try decode(&sub))
    case 114:  // r (struct)
      var sub = DBusMessageIter()
      dbus_message_iter_recurse(iter, &sub)
      if case .structure(let fields)? = known {
        return .structure(try decodeAll(&sub, types: fields))
      }
      return .structure(try decodeAll(&sub))
    case 97:  // a
      return try decodeArray(iter, known: known)
    case 104:  // h
      throw DBusError(.notSupported, "the message carries a unix file descriptor (h)")
    default:
      throw DBusError(.invalidArgs, "the message carries an unknown type code \(code)")
    }
  }

  private static func readString(_ iter: UnsafeMutablePointer<DBusMessageIter>) -> String {
    var p: UnsafePointer<CChar>?
    dbus_message_iter_get_basic(iter, &p)
    return p.map { String(cString: $0) } ?? ""
  }

  private static func decodeArray(
    _ iter: UnsafeMutablePointer<DBusMessageIter>, known: DBusType?
  ) throws(DBusError) -> DBusValue {
    let elementCode = dbus_message_iter_get_element_type(iter)
    var sub = DBusMessageIter()
    dbus_message_iter_recurse(iter, &sub)
    if elementCode == 121 {  // ay
      var p: UnsafePointer<UInt8>?
      var count: Int32 = 0
      dbus_message_iter_get_fixed_array(&sub, &p, &count)
      guard let p, count > 0 else { return .bytes([]) }
      return .bytes(Array(UnsafeBufferPointer(start: p, count: Int(count))))
    }
    let arrayType: DBusType
    if let known { arrayType = known } else { arrayType = try currentType(iter) }
    switch arrayType {
    case .dictionary(let keyType, let valueType):
      var entries: [DBusDictEntry] = []
      while dbus_message_iter_get_arg_type(&sub) != 0 {
        var pair = DBusMessageIter()
        dbus_message_iter_recurse(&sub, &pair)
        let key = try decode(&pair, known: keyType)
        dbus_message_iter_next(&pair)
        let value = try decode(&pair, known: valueType)
        entries.append(DBusDictEntry(key, value))
        dbus_message_iter_next(&sub)
      }
      return .dictionary(key: keyType, value: valueType, entries)
    case .array(let elementType):
      var elements: [DBusValue] = []
      while dbus_message_iter_get_arg_type(&sub) != 0 {
        elements.append(try decode(&sub, known: elementType))
        dbus_message_iter_next(&sub)
      }
      return .array(elementType, elements)
    default:
      throw DBusError(.invalidArgs, "an array's signature is \(arrayType.signature)")
    }
  }

  /// The full type of the argument `iter` points at (needed for arrays, whose element type
  /// must be known even when empty). Common signatures skip the parser.
  private static func currentType(_ iter: UnsafeMutablePointer<DBusMessageIter>) throws(DBusError)
    -> DBusType
  {
    guard let raw = dbus_message_iter_get_signature(iter) else {
      throw DBusError(.noMemory, "out of memory while reading a signature")
    }
    defer { dbus_free(raw) }
    let signature = String(cString: raw)
    switch signature {
    case "a{sv}": return .dictionary(key: .string, value: .variant)
    case "a{qv}": return .dictionary(key: .uint16, value: .variant)
    case "as": return .array(.string)
    case "ao": return .array(.objectPath)
    case "a{sa{sv}}":
      return .dictionary(key: .string, value: .dictionary(key: .string, value: .variant))
    default: return try DBusType(signature: signature)
    }
  }
}

extension DBusValueDecoder {
  /// The types of a body's signature; the signatures of BlueZ's and the bus's common signals
  /// skip the parser.
  static func bodyTypes(_ signature: String) throws(DBusError) -> [DBusType] {
    let vardict = DBusType.dictionary(key: .string, value: .variant)
    switch signature {
    case "": return []
    case "sa{sv}as": return [.string, vardict, .array(.string)]
    case "oa{sa{sv}}": return [.objectPath, .dictionary(key: .string, value: vardict)]
    case "oas": return [.objectPath, .array(.string)]
    case "sss": return [.string, .string, .string]
    case "s": return [.string]
    case "v": return [.variant]
    case "a{sv}": return [vardict]
    default: return try DBusType.list(signature: signature)
    }
  }
}
