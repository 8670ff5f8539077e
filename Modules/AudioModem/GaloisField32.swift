/// Arithmetic in GF(2⁵) with the primitive polynomial x⁵ + x² + 1; α = 2.
enum GaloisField32 {
  static let order = 32
  /// exp[i] = αⁱ, doubled so that exp[log a + log b] needs no modulo.
  static let exp: [UInt8] = {
    var table = [UInt8](repeating: 0, count: 62)
    var value = 1
    for index in 0..<31 {
      table[index] = UInt8(value)
      table[index + 31] = UInt8(value)
      value <<= 1
      if value & 0x20 != 0 { value ^= 0x25 }
    }
    return table
  }()
  /// log[a] for a ≠ 0 (log[0] is unused).
  static let log: [Int] = {
    var table = [Int](repeating: 0, count: 32)
    for index in 0..<31 { table[Int(exp[index])] = index }
    return table
  }()

  static func multiply(_ a: UInt8, _ b: UInt8) -> UInt8 {
    if a == 0 || b == 0 { return 0 }
    return exp[log[Int(a)] + log[Int(b)]]
  }

  /// - Precondition: `a` ≠ 0.
  static func inverse(_ a: UInt8) -> UInt8 {
    precondition(a != 0)
    return exp[(31 - log[Int(a)]) % 31]
  }

  /// αⁿ for any integer n.
  static func power(_ n: Int) -> UInt8 {
    exp[((n % 31) + 31) % 31]
  }

  /// Evaluates a polynomial given lowest degree first at `x`.
  static func evaluate(_ poly: [UInt8], at x: UInt8) -> UInt8 {
    var result: UInt8 = 0
    for coefficient in poly.reversed() { result = multiply(result, x) ^ coefficient }
    return result
  }
}
