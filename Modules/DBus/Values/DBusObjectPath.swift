/// A D-Bus object path such as `/org/bluez/hci0`, checked when made.
public struct DBusObjectPath: Sendable, Hashable, Comparable, CustomStringConvertible {
  /// The path text.
  public let rawValue: String

  /// The root path `/`.
  public static let root = DBusObjectPath(unchecked: "/")

  /// A path.
  /// - Throws: ``DBusError`` named ``DBusError/Name-swift.struct/invalidArgs`` unless the text
  ///   is `/` or `/`-separated non-empty elements of `[A-Za-z0-9_]` with no trailing `/`.
  public init(_ text: String) throws(DBusError) {
    guard Self.isValid(text) else {
      throw DBusError.invalidValue(
        "\"\(text)\" is not an object path (\"/\" or /-separated elements of [A-Za-z0-9_])")
    }
    rawValue = text
  }

  init(unchecked text: String) { rawValue = text }

  /// Whether `text` is a valid object path.
  public static func isValid(_ text: String) -> Bool {
    let bytes = text.utf8
    guard bytes.first == UInt8(ascii: "/") else { return false }
    if bytes.count == 1 { return true }
    var previousSlash = false
    for byte in bytes {
      if byte == UInt8(ascii: "/") {
        if previousSlash { return false }
        previousSlash = true
      } else {
        guard isElementByte(byte) else { return false }
        previousSlash = false
      }
    }
    return !previousSlash
  }

  static func isElementByte(_ byte: UInt8) -> Bool {
    (byte >= 0x30 && byte <= 0x39) || (byte >= 0x41 && byte <= 0x5a)
      || (byte >= 0x61 && byte <= 0x7a) || byte == UInt8(ascii: "_")
  }

  /// A child path: `self` + `/` + `element`.
  /// - Throws: when `element` is empty or holds characters outside `[A-Za-z0-9_]`.
  public func appending(_ element: String) throws(DBusError) -> DBusObjectPath {
    try DBusObjectPath(rawValue == "/" ? "/" + element : rawValue + "/" + element)
  }

  /// Whether `self` is `other` or lies below it.
  public func isDescendant(of other: DBusObjectPath) -> Bool {
    if other.rawValue == "/" || other == self { return true }
    return rawValue.hasPrefix(other.rawValue + "/")
  }

  public var description: String { rawValue }
  public static func < (lhs: Self, rhs: Self) -> Bool { lhs.rawValue < rhs.rawValue }
}

/// A D-Bus type signature carried as a value (type `g`), checked when made.
public struct DBusSignature: Sendable, Hashable, CustomStringConvertible {
  /// The signature text, such as `a{sv}`.
  public let rawValue: String
  /// The types it lists.
  public var types: [DBusType] { (try? DBusType.list(signature: rawValue)) ?? [] }

  /// A signature.
  /// - Throws: ``DBusError`` named ``DBusError/Name-swift.struct/invalidSignature`` when the
  ///   text is not a valid signature.
  public init(_ text: String) throws(DBusError) {
    _ = try DBusType.list(signature: text)
    rawValue = text
  }

  /// The signature of `types`.
  public init(_ types: [DBusType]) { rawValue = DBusType.signature(of: types) }

  public var description: String { rawValue }
}

/// Checks of names D-Bus restricts (bus, interface, member and error names).
enum DBusNames {
  private static func isNameByte(_ byte: UInt8, allowDigit: Bool, allowHyphen: Bool) -> Bool {
    (byte >= 0x41 && byte <= 0x5a) || (byte >= 0x61 && byte <= 0x7a) || byte == UInt8(ascii: "_")
      || (allowDigit && byte >= 0x30 && byte <= 0x39) || (allowHyphen && byte == UInt8(ascii: "-"))
  }

  /// A member (method or signal or property) name: `[A-Za-z_][A-Za-z0-9_]*`, ≤ 255 bytes.
  static func isMember(_ text: String) -> Bool {
    let bytes = Array(text.utf8)
    guard !bytes.isEmpty, bytes.count <= 255 else { return false }
    for (index, byte) in bytes.enumerated()
    where !isNameByte(byte, allowDigit: index > 0, allowHyphen: false) {
      return false
    }
    return true
  }

  /// An interface or error name: two or more `.`-separated elements, each a member name.
  static func isInterface(_ text: String) -> Bool {
    guard text.utf8.count <= 255 else { return false }
    let elements = text.split(separator: ".", omittingEmptySubsequences: false)
    return elements.count >= 2 && elements.allSatisfy { isMember(String($0)) }
  }

  /// A bus name: a unique name (`:1.42`) or a well-known name (`org.bluez`).
  static func isBusName(_ text: String) -> Bool {
    let bytes = Array(text.utf8)
    guard !bytes.isEmpty, bytes.count <= 255 else { return false }
    let unique = bytes[0] == UInt8(ascii: ":")
    let body = unique ? bytes.dropFirst() : bytes[...]
    let elements = body.split(separator: UInt8(ascii: "."), omittingEmptySubsequences: false)
    guard elements.count >= 2 else { return false }
    for element in elements {
      guard !element.isEmpty else { return false }
      for (index, byte) in element.enumerated()
      where !isNameByte(byte, allowDigit: unique || index > 0, allowHyphen: true) {
        return false
      }
    }
    return true
  }
}
