import Foundation

/// The fields of an `application/x-www-form-urlencoded` body or query string. A field given
/// twice keeps its first value; a field that does not decode is left out.
struct ConsoleForm: Sendable {
  /// The most fields one form may have: a body with more is no form of ours.
  static let maximumFields = 64
  private(set) var fields: [String: String] = [:]

  init(_ text: Substring) {
    for pair in text.split(separator: "&").prefix(Self.maximumFields) {
      let parts = pair.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
      guard let name = Self.decode(parts[0]) else { continue }
      let value = parts.count > 1 ? Self.decode(parts[1]) : ""
      if fields[name] == nil, let value { fields[name] = value }
    }
  }

  subscript(_ name: String) -> String? { fields[name] }

  /// The field, trimmed of surrounding whitespace; "" when absent.
  func text(_ name: String) -> String {
    (fields[name] ?? "").trimmingCharacters(in: .whitespaces)
  }

  private static func decode(_ part: Substring) -> String? {
    part.replacingOccurrences(of: "+", with: " ").removingPercentEncoding
  }
}
