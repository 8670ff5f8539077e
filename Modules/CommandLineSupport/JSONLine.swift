import Foundation

/// Writes values as one compact JSON object a line, keys sorted, for scripts (`--json`).
public enum JSONLine {
  /// The value as one line of JSON; `{}` if it cannot be encoded.
  public static func encode(_ value: some Encodable) -> String {
    let encoder = JSONEncoder()
    encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
    guard let data = try? encoder.encode(value) else { return "{}" }
    return String(decoding: data, as: UTF8.self)
  }
}
