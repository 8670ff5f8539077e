extension String {
  /// The text with zeros in front up to `width` characters (hex numbers in output).
  func leftPadded(to width: Int) -> String {
    count >= width ? self : String(repeating: "0", count: width - count) + self
  }
}
