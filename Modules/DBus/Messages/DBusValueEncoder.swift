import CDBus

/// Writes ``DBusValue``s into a libdbus message. ``check(_:depth:)`` runs first over the whole
/// body, so ``append(_:to:)`` only meets values libdbus accepts; it fails only when libdbus runs
/// out of memory.
enum DBusValueEncoder {
  /// Checks that a value can be encoded: strings without NUL, elements of their array's type,
  /// basic dictionary keys, non-empty structs, nesting and signature limits.
  static func check(_ value: DBusValue, depth: Int) throws(DBusError) {
    guard depth <= 64 else {
      throw DBusError.invalidValue("the value nests containers deeper than D-Bus allows")
    }
    switch value {
    case .string(let text):
      guard !text.utf8.contains(0) else {
        throw DBusError.invalidValue("a D-Bus string cannot contain NUL: \(text.debugDescription)")
      }
    case .array(let element, let elements):
      try checkType(element)
      for item in elements {
        guard item.type == element else {
          throw DBusError.invalidValue(
            "an array of \(element.signature) holds a \(item.type.signature) element")
        }
        try check(item, depth: depth + 1)
      }
    case .dictionary(let key, let valueType, let entries):
      guard key.isBasic else {
        throw DBusError.invalidValue("a dictionary key must be basic, not \(key.signature)")
      }
      try checkType(valueType)
      for entry in entries {
        guard entry.key.type == key, entry.value.type == valueType else {
          throw DBusError.invalidValue(
            "a dictionary a{\(key.signature)\(valueType.signature)} holds an entry "
              + "{\(entry.key.type.signature)\(entry.value.type.signature)}")
        }
        try check(entry.key, depth: depth + 1)
        try check(entry.value, depth: depth + 1)
      }
    case .structure(let fields):
      guard !fields.isEmpty else { throw DBusError.invalidValue("a struct needs a field") }
      for field in fields { try check(field, depth: depth + 1) }
    case .variant(let inner):
      let signature = inner.type.signature
      guard signature.utf8.count <= DBusType.maximumSignatureLength else {
        throw DBusError.invalidValue("a variant's signature is longer than 255 bytes")
      }
      try check(inner, depth: depth + 1)
    default:
      break
    }
  }

  /// Checks a declared element type by parsing its signature (limits and rules).
  private static func checkType(_ type: DBusType) throws(DBusError) {
    _ = try DBusType(signature: type.signature)
  }

  /// Appends a checked value; false when libdbus runs out of memory.
  static func append(_ value: DBusValue, to iter: UnsafeMutablePointer<DBusMessageIter>) -> Bool {
    switch value {
    case .byte(var v): return appendBasic(iter, "y", &v)
    case .boolean(let b):
      var v: dbus_bool_t = b ? 1 : 0
      return appendBasic(iter, "b", &v)
    case .int16(var v): return appendBasic(iter, "n", &v)
    case .uint16(var v): return appendBasic(iter, "q", &v)
    case .int32(var v): return appendBasic(iter, "i", &v)
    case .uint32(var v): return appendBasic(iter, "u", &v)
    case .int64(var v): return appendBasic(iter, "x", &v)
    case .uint64(var v): return appendBasic(iter, "t", &v)
    case .double(var v): return appendBasic(iter, "d", &v)
    case .string(let text): return appendString(iter, "s", text)
    case .objectPath(let path): return appendString(iter, "o", path.rawValue)
    case .signature(let signature): return appendString(iter, "g", signature.rawValue)
    case .bytes(let bytes): return appendBytes(iter, bytes)
    case .array(.byte, let elements):
      return appendBytes(iter, elements.compactMap { if case .byte(let b) = $0 { b } else { nil } })
    case .array(let element, let elements):
      return container(iter, "a", element.signature) { sub in
        elements.allSatisfy { append($0, to: sub) }
      }
    case .dictionary(let key, let valueType, let entries):
      let entrySignature = "{" + key.signature + valueType.signature + "}"
      return container(iter, "a", entrySignature) { sub in
        entries.allSatisfy { entry in
          container(sub, "e", nil) { pair in
            append(entry.key, to: pair) && append(entry.value, to: pair)
          }
        }
      }
    case .structure(let fields):
      return container(iter, "r", nil) { sub in fields.allSatisfy { append($0, to: sub) } }
    case .variant(let inner):
      return container(iter, "v", inner.type.signature) { sub in append(inner, to: sub) }
    }
  }

  private static func code(_ character: Unicode.Scalar) -> Int32 { Int32(character.value) }

  private static func appendBasic<T: BitwiseCopyable>(
    _ iter: UnsafeMutablePointer<DBusMessageIter>, _ type: Unicode.Scalar, _ value: inout T
  ) -> Bool {
    dbus_message_iter_append_basic(iter, code(type), &value) != 0
  }

  private static func appendString(
    _ iter: UnsafeMutablePointer<DBusMessageIter>, _ type: Unicode.Scalar, _ text: String
  ) -> Bool {
    text.withCString { pointer in
      var p: UnsafePointer<CChar>? = pointer
      return dbus_message_iter_append_basic(iter, code(type), &p) != 0
    }
  }

  private static func appendBytes(_ iter: UnsafeMutablePointer<DBusMessageIter>, _ bytes: [UInt8])
    -> Bool
  {
    container(iter, "a", "y") { sub in
      bytes.withUnsafeBufferPointer { buffer in
        guard var p = buffer.baseAddress, !buffer.isEmpty else { return true }
        return dbus_message_iter_append_fixed_array(sub, code("y"), &p, Int32(buffer.count)) != 0
      }
    }
  }

  /// Opens a container ("a", "e" dict entry, "r" struct, "v"), fills it, closes it. On failure
  /// the container is abandoned so that libdbus's state stays consistent.
  private static func container(
    _ iter: UnsafeMutablePointer<DBusMessageIter>, _ type: Unicode.Scalar, _ signature: String?,
    _ fill: (UnsafeMutablePointer<DBusMessageIter>) -> Bool
  ) -> Bool {
    let containerCode: Int32 =
      switch type {
      case "e": 101  // DBUS_TYPE_DICT_ENTRY
      case "r": 114  // DBUS_TYPE_STRUCT
      default: code(type)
      }
    var sub = DBusMessageIter()
    let opened: Bool =
      if let signature {
        signature.withCString { dbus_message_iter_open_container(iter, containerCode, $0, &sub) }
          != 0
      } else {
        dbus_message_iter_open_container(iter, containerCode, nil, &sub) != 0
      }
    guard opened else { return false }
    guard withUnsafeMutablePointer(to: &sub, fill) else {
      dbus_message_iter_abandon_container(iter, &sub)
      return false
    }
    return dbus_message_iter_close_container(iter, &sub) != 0
  }
}
