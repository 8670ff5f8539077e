import Foundation

/// Converts between `Codable` values and ``StoreValue``, with fast paths for the plain types.
enum StoreValueCoding {
  /// Dates are ISO 8601 strings (whole seconds), so that a person can read them in the file.
  private static var encoder: JSONEncoder {
    let encoder = JSONEncoder()
    encoder.dateEncodingStrategy = .iso8601
    return encoder
  }
  private static var decoder: JSONDecoder {
    let decoder = JSONDecoder()
    decoder.dateDecodingStrategy = .iso8601
    return decoder
  }

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
        return try JSONDecoder().decode(StoreValue.self, from: encoder.encode(value))
      } catch {
        throw .unencodable(key: key, reason: "\(error)")
      }
    }
  }

  static func decode<T: Decodable>(
    _ type: T.Type, from stored: StoreValue, key: String
  ) throws(StoreError) -> T {
    do {
      return try decoder.decode(T.self, from: JSONEncoder().encode(stored))
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
