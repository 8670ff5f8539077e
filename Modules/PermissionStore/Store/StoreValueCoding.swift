import Foundation

/// Converts between `Codable` values and ``StoreValue``, with fast paths for the plain types.
enum StoreValueCoding {
  static func encode<T: Encodable>(_ value: T, key: String) throws(StoreError) -> StoreValue {
    switch value {
    case let value as Bool: return .bool(value)
    case let value as Int: return .int(value)
    case let value as String: return .string(value)
    case let value as Data: return .string(value.base64EncodedString())
    case let value as Double:
      guard value.isFinite else { throw .unencodable(key: key, reason: "\(value) is not finite") }
      return .double(value)
    case let value as StoreValue: return value
    default:
      do {
        let data = try JSONEncoder().encode(value)
        return try JSONDecoder().decode(StoreValue.self, from: data)
      } catch {
        throw .unencodable(key: key, reason: "\(error)")
      }
    }
  }

  static func decode<T: Decodable>(
    _ type: T.Type, from stored: StoreValue, key: String
  ) throws(StoreError) -> T {
    do {
      let data = try JSONEncoder().encode(stored)
      return try JSONDecoder().decode(T.self, from: data)
    } catch {
      throw .typeMismatch(key: key, expected: "\(T.self)", found: stored.typeName)
    }
  }
}

extension StoreValue {
  /// The JSON type of this value, for error messages.
  var typeName: String {
    switch self {
    case .null: "null"
    case .bool: "a Bool"
    case .int: "an Int"
    case .double: "a Double"
    case .string: "a String"
    case .array: "an array"
    case .object: "an object"
    }
  }
}
