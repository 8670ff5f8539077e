/// A QR code (ISO/IEC 18004, model 2) of bytes, in byte mode: versions 1 to 10 (up to 271
/// bytes at level L, 213 at M), the mask chosen by the standard's penalty rules. Enough for a
/// link or a token; what `nearby --web` prints on a terminal.
public struct QRCode: Sendable, Equatable {
  /// The error correction level: L recovers about 7 % of the symbol, M about 15 %.
  public enum Level: Sendable {
    case low, medium

    var formatBits: Int { self == .low ? 1 : 0 }
  }

  /// The version (1–10): the side is 17 + 4 × version modules.
  public let version: Int
  /// Modules on a side.
  public let size: Int
  /// Row-major, `true` for dark.
  public let modules: [Bool]

  /// Whether the module at column `x`, row `y` is dark.
  public subscript(x: Int, y: Int) -> Bool { modules[y * size + x] }

  /// Encodes `bytes`, in the smallest version that holds them at `level`.
  /// - Throws: ``QRCodeError/tooLong(_:maximum:)`` past version 10's capacity.
  public init(bytes: [UInt8], level: Level = .medium) throws(QRCodeError) {
    guard
      let version = (1...QRTables.maximumVersion).first(where: {
        QRTables.dataCodewords(version: $0, level: level) * 8 >= 4 + 8 * ($0 < 10 ? 1 : 2)
          + 8 * bytes.count
      })
    else {
      throw .tooLong(
        bytes.count,
        maximum: QRTables.dataCodewords(version: QRTables.maximumVersion, level: level) - 3)
    }
    var grid = QRGrid(version: version)
    grid.drawFunctionPatterns()
    let codewords = QRTables.interleaved(
      QRTables.dataCodewords(for: bytes, version: version, level: level), version: version,
      level: level)
    grid.drawCodewords(codewords)
    var best: QRGrid?
    var bestPenalty = Int.max
    for mask in 0..<8 {
      var candidate = grid
      candidate.apply(mask: mask)
      candidate.drawFormatBits(level: level, mask: mask)
      let penalty = candidate.penalty()
      if penalty < bestPenalty { (best, bestPenalty) = (candidate, penalty) }
    }
    self.version = version
    size = grid.size
    modules = best?.modules ?? grid.modules
  }

  /// Encodes the UTF-8 of `text`.
  public init(text: String, level: Level = .medium) throws(QRCodeError) {
    try self.init(bytes: Array(text.utf8), level: level)
  }
}

/// Why bytes cannot be encoded.
public enum QRCodeError: Error, Sendable, Equatable, CustomStringConvertible {
  case tooLong(Int, maximum: Int)

  public var description: String {
    switch self {
    case .tooLong(let count, let maximum):
      "\(count) bytes do not fit a QR code of version 10 (at most \(maximum) at this level)"
    }
  }
}
