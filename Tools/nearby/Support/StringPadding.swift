import Foundation

extension String {
  /// The text with zeros in front up to `width` characters (hex numbers in output).
  func leftPadded(to width: Int) -> String {
    count >= width ? self : String(repeating: "0", count: width - count) + self
  }
}

extension [String] {
  /// The values as one table line: each padded with spaces to its column's width, separated
  /// by a space, trailing spaces trimmed.
  func columns(widths: [Int]) -> String {
    zip(self, widths).map { value, width in
      value.count >= width ? value : value + String(repeating: " ", count: width - value.count)
    }.joined(separator: " ").trimmingCharacters(in: .whitespaces)
  }
}
