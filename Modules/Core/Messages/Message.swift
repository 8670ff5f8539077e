public import Foundation

/// A small message that one app publishes and others receive when they are near.
///
/// Limits (checked by ``validate()``, which `publish` calls): ``content`` at most
/// ``maximumContentBytes`` bytes; ``type`` at most ``maximumTypeLength`` bytes of UTF-8 and no
/// control characters; ``namespace`` at most ``maximumNamespaceLength`` characters of
/// `[A-Za-z0-9._-]`. Lengths are UTF-8 bytes, not `Character`s (one character can be
/// megabytes of combining marks), and the resolver server applies the same rules.
/// The empty namespace is the project's default namespace.
public struct Message: Sendable, Hashable, Codable {
  /// The payload.
  public var content: Data
  /// What kind of message this is, for subscription filters (`""` by default).
  public var type: String
  /// The namespace the type lives in (`""`: the project's default).
  public var namespace: String

  /// The largest content: 102 400 bytes (100 KiB).
  public static let maximumContentBytes = 102_400
  /// The longest type: 32 bytes of UTF-8.
  public static let maximumTypeLength = 32
  /// The longest namespace: 64 characters (of `[A-Za-z0-9._-]`, so 64 bytes).
  public static let maximumNamespaceLength = 64

  public init(content: Data, type: String = "", namespace: String = "") {
    self.content = content
    self.type = type
    self.namespace = namespace
  }

  /// A message whose content is the UTF-8 bytes of `text`.
  public init(text: String, type: String = "", namespace: String = "") {
    self.init(content: Data(text.utf8), type: type, namespace: namespace)
  }

  /// The content as UTF-8 text, or `nil` if it is not valid UTF-8.
  public var text: String? { String(data: content, encoding: .utf8) }

  /// Checks the limits.
  /// - Throws: ``MessageError`` naming the limit that is exceeded.
  public func validate() throws(MessageError) {
    if content.count > Self.maximumContentBytes {
      throw .contentTooLarge(bytes: content.count, limit: Self.maximumContentBytes)
    }
    try Self.validate(type: type)
    try Self.validate(namespace: namespace)
  }

  /// Checks a type (of a message or a subscription filter).
  /// - Throws: ``MessageError/typeTooLong(bytes:limit:)`` (over 32 bytes of UTF-8) or
  ///   ``MessageError/typeHasControlCharacters``.
  public static func validate(type: String) throws(MessageError) {
    if type.utf8.count > maximumTypeLength {
      throw .typeTooLong(bytes: type.utf8.count, limit: maximumTypeLength)
    }
    if containsControlCharacters(type) { throw .typeHasControlCharacters }
  }

  /// Whether `text` holds a control character (Unicode category Cc: U+0000–U+001F and
  /// U+007F–U+009F, NUL included). Types, namespaces and the server's other stored texts
  /// refuse them.
  public static func containsControlCharacters(_ text: some StringProtocol) -> Bool {
    text.unicodeScalars.contains { $0.value < 0x20 || (0x7F...0x9F).contains($0.value) }
  }

  /// Checks a namespace (of a message or a subscription filter).
  /// - Throws: ``MessageError/namespaceTooLong(bytes:limit:)`` (over 64 bytes of UTF-8) or
  ///   ``MessageError/namespaceInvalidCharacter(_:)``.
  public static func validate(namespace: String) throws(MessageError) {
    if namespace.utf8.count > maximumNamespaceLength {
      throw .namespaceTooLong(bytes: namespace.utf8.count, limit: maximumNamespaceLength)
    }
    for scalar in namespace.unicodeScalars {
      let ok =
        ("a"..."z").contains(scalar) || ("A"..."Z").contains(scalar)
        || ("0"..."9").contains(scalar) || scalar == "." || scalar == "_" || scalar == "-"
      if !ok { throw .namespaceInvalidCharacter(Character(scalar)) }
    }
  }
}

extension Message: CustomStringConvertible {
  public var description: String {
    let preview: String
    if let text, !text.isEmpty {
      preview = text.count > 40 ? "\"\(text.prefix(40))…\"" : "\"\(text)\""
    } else {
      preview = "\(content.count) bytes"
    }
    let kind = namespace.isEmpty ? type : "\(namespace)/\(type)"
    return kind.isEmpty ? preview : "\(preview) (\(kind))"
  }
}

/// Why a message (or a subscription's namespace/type filter) was rejected.
public enum MessageError: Error, Sendable, Hashable {
  /// Content over the 102 400-byte limit.
  case contentTooLarge(bytes: Int, limit: Int)
  /// Type over the limit of 32 bytes of UTF-8.
  case typeTooLong(bytes: Int, limit: Int)
  /// Type with control characters.
  case typeHasControlCharacters
  /// Namespace over the limit of 64 bytes (characters of `[A-Za-z0-9._-]`).
  case namespaceTooLong(bytes: Int, limit: Int)
  /// Namespace with a character outside `[A-Za-z0-9._-]`.
  case namespaceInvalidCharacter(Character)
}

extension MessageError: CustomStringConvertible {
  public var description: String {
    switch self {
    case .contentTooLarge(let bytes, let limit):
      "message content is \(bytes) bytes; the limit is \(limit) bytes"
    case .typeTooLong(let bytes, let limit):
      "message type is \(bytes) bytes of UTF-8; the limit is \(limit) bytes"
    case .typeHasControlCharacters:
      "message type must not contain control characters"
    case .namespaceTooLong(let bytes, let limit):
      "namespace is \(bytes) bytes; the limit is \(limit) characters of [A-Za-z0-9._-]"
    case .namespaceInvalidCharacter(let character):
      "namespace contains \"\(character.unicodeScalars.map { $0.escaped(asASCII: true) }.joined())\"; "
        + "allowed are the 64 characters [A-Za-z0-9._-]"
    }
  }
}
