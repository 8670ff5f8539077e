public import Foundation

/// A small message that one app publishes and others receive when they are near.
///
/// Limits (checked by ``validate()``, which `publish` calls): ``content`` at most
/// ``maximumContentBytes`` bytes; ``type`` at most ``maximumTypeLength`` characters;
/// ``namespace`` at most ``maximumNamespaceLength`` characters of `[A-Za-z0-9._-]`.
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
  /// The longest type: 32 characters.
  public static let maximumTypeLength = 32
  /// The longest namespace: 64 characters.
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
  /// - Throws: ``MessageError/typeTooLong(characters:limit:)`` or
  ///   ``MessageError/typeHasControlCharacters``.
  public static func validate(type: String) throws(MessageError) {
    if type.count > maximumTypeLength {
      throw .typeTooLong(characters: type.count, limit: maximumTypeLength)
    }
    if type.unicodeScalars.contains(where: { $0.properties.generalCategory == .control }) {
      throw .typeHasControlCharacters
    }
  }

  /// Checks a namespace (of a message or a subscription filter).
  /// - Throws: ``MessageError/namespaceTooLong(characters:limit:)`` or
  ///   ``MessageError/namespaceInvalidCharacter(_:)``.
  public static func validate(namespace: String) throws(MessageError) {
    if namespace.count > maximumNamespaceLength {
      throw .namespaceTooLong(characters: namespace.count, limit: maximumNamespaceLength)
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
  /// Type over the 32-character limit.
  case typeTooLong(characters: Int, limit: Int)
  /// Type with control characters.
  case typeHasControlCharacters
  /// Namespace over the 64-character limit.
  case namespaceTooLong(characters: Int, limit: Int)
  /// Namespace with a character outside `[A-Za-z0-9._-]`.
  case namespaceInvalidCharacter(Character)
}

extension MessageError: CustomStringConvertible {
  public var description: String {
    switch self {
    case .contentTooLarge(let bytes, let limit):
      "message content is \(bytes) bytes; the limit is \(limit) bytes"
    case .typeTooLong(let characters, let limit):
      "message type is \(characters) characters; the limit is \(limit) characters"
    case .typeHasControlCharacters:
      "message type must not contain control characters"
    case .namespaceTooLong(let characters, let limit):
      "namespace is \(characters) characters; the limit is \(limit) characters of [A-Za-z0-9._-]"
    case .namespaceInvalidCharacter(let character):
      "namespace contains \"\(character.unicodeScalars.map { $0.escaped(asASCII: true) }.joined())\"; "
        + "allowed are the 64 characters [A-Za-z0-9._-]"
    }
  }
}
