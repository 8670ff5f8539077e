import Core
import Crypto
import Foundation

/// How values the tables keep as text (JSON) or digests are written and read, one encoder and
/// decoder per transaction.
final class SQLCoding {
  private let encoder: JSONEncoder
  private let decoder = JSONDecoder()

  init() {
    encoder = JSONEncoder()
    encoder.outputFormatting = .sortedKeys
  }

  func json(_ value: some Encodable) throws -> String {
    String(decoding: try encoder.encode(value), as: UTF8.self)
  }

  func decode<T: Decodable>(_ type: T.Type, _ text: String) throws -> T {
    do { return try decoder.decode(type, from: Data(text.utf8)) } catch {
      throw SQLStorageError.unexpectedValue("\(T.self) \(text): \(error)")
    }
  }

  /// A digest of everything that makes two messages the same (namespace, type, content), so
  /// that "another publication of the same message" is one indexed comparison.
  static func digest(of message: Message) -> [UInt8] {
    var hash = SHA256()
    for part in [Data(message.namespace.utf8), Data(message.type.utf8)] {
      withUnsafeBytes(of: UInt64(part.count).bigEndian) { hash.update(bufferPointer: $0) }
      hash.update(data: part)
    }
    hash.update(data: message.content)
    return Array(hash.finalize())
  }
}

/// An identifier read back from its text.
func identifier<Tag>(_ text: String) throws -> TaggedIdentifier<Tag> {
  guard let id = TaggedIdentifier<Tag>(text) else {
    throw SQLStorageError.unexpectedValue("identifier \(text)")
  }
  return id
}
