/// Statements whose text depends on how many values they carry (`IN (…)` lists, multi-row
/// inserts) come in a few shapes only, so a connection's statement cache (GRDB keeps every
/// statement it prepared) stays small whatever the clients send: an `IN` list is padded to a
/// power of two, and rows are inserted in chunks of power-of-two sizes.
enum StatementShapes {
  /// `values` as an `IN (…)` list: the placeholders and the binds, padded by repeating the last
  /// value to the next power of two (a repeated value changes nothing in `IN`).
  static func inList(_ values: [SQLValue]) -> (marks: String, binds: [SQLValue]) {
    guard let last = values.last else { return ("NULL", []) }
    var size = 1
    while size < values.count { size *= 2 }
    let binds = values + Array(repeating: last, count: size - values.count)
    return (Array(repeating: "?", count: size).joined(separator: ", "), binds)
  }

  /// How to split `count` rows into statements: `maximum`-row chunks while they fit, then the
  /// rest as decreasing powers of two (13 → 8, 4, 1). `maximum` is a power of two.
  static func chunks(_ count: Int, maximum: Int = 128) -> [Int] {
    var sizes: [Int] = []
    var left = count
    while left >= maximum {
      sizes.append(maximum)
      left -= maximum
    }
    var size = maximum / 2
    while left > 0 {
      if left >= size {
        sizes.append(size)
        left -= size
      }
      size /= 2
    }
    return sizes
  }
}
