extension QRCode {
  /// The symbol for a terminal: two rows of modules a line in half blocks (▀), dark and
  /// light as explicit black and white (ANSI 256 colours), so that it reads on dark and light
  /// themes alike, with the standard's quiet zone of 4 modules.
  public func terminalText() -> String {
    let quiet = 4
    let side = size + 2 * quiet
    func dark(_ x: Int, _ y: Int) -> Bool {
      let (column, row) = (x - quiet, y - quiet)
      guard (0..<size).contains(column), (0..<size).contains(row) else { return false }
      return self[column, row]
    }
    var lines: [String] = []
    for y in stride(from: 0, to: side, by: 2) {
      var line = ""
      for x in 0..<side {
        let top = dark(x, y) ? 16 : 231
        let bottom = y + 1 < side && dark(x, y + 1) ? 16 : 231
        line += "\u{1B}[38;5;\(top)m\u{1B}[48;5;\(bottom)m▀"
      }
      lines.append(line + "\u{1B}[0m")
    }
    return lines.joined(separator: "\n")
  }

  /// The symbol as a plain PGM image (`scale` pixels a module, quiet zone included), for
  /// tools that read images.
  public func pgm(scale: Int = 4) -> [UInt8] {
    let quiet = 4
    let side = (size + 2 * quiet) * scale
    var pixels: [UInt8] = []
    pixels.reserveCapacity(side * side)
    for y in 0..<side {
      for x in 0..<side {
        let (column, row) = (x / scale - quiet, y / scale - quiet)
        let isDark =
          (0..<size).contains(column) && (0..<size).contains(row) && self[column, row]
        pixels.append(isDark ? 0 : 255)
      }
    }
    return Array("P5\n\(side) \(side)\n255\n".utf8) + pixels
  }
}
