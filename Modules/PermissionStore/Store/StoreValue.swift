/// One value in a ``DefaultsStore``, as it is written in the store's JSON file.
///
/// Bool, Int, Double and String map to the JSON types of the same name; `Data` is written as a
/// base64 string; any other `Codable` value is written as the JSON its `Encodable`
/// conformance produces (an object, an array, ...).
public enum StoreValue: Sendable, Hashable {
  case null
  case bool(Bool)
  case int(Int)
  case double(Double)
  case string(String)
  case array([StoreValue])
  case object([String: StoreValue])
}

extension StoreValue: Codable {
  public init(from decoder: any Decoder) throws {
    let container = try decoder.singleValueContainer()
    if container.decodeNil() {
      self = .null
    } else if let value = try? container.decode(Bool.self) {
      self = .bool(value)
    } else if let value = try? container.decode(Int.self) {
      self = .int(value)
    } else if let value = try? container.decode(Double.self) {
      self = .double(value)
    } else if let value = try? container.decode(String.self) {
      self = .string(value)
    } else if let value = try? container.decode([StoreValue].self) {
      self = .array(value)
    } else {
      self = .object(try container.decode([String: StoreValue].self))
    }
  }

  public func encode(to encoder: any Encoder) throws {
    var container = encoder.singleValueContainer()
    switch self {
    case .null: try container.encodeNil()
    case .bool(let value): try container.encode(value)
    case .int(let value): try container.encode(value)
    case .double(let value): try container.encode(value)
    case .string(let value): try container.encode(value)
    case .array(let value): try container.encode(value)
    case .object(let value): try container.encode(value)
    }
  }
}
