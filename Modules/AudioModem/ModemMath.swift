/// The elementary functions the modem needs (sine, cosine, natural and decimal logarithm,
/// arctangent), in Swift alone.
///
/// Why not the C library's: the same modem runs in a web page, compiled to WebAssembly with
/// Embedded Swift, where there is no libm; and one implementation on both sides means the
/// native build and the page's give the same samples and the same decisions bit for bit
/// (IEEE 754 arithmetic is exact the same way on both), which a test checks. The methods are
/// fdlibm's (range reduction by Cody and Waite, then its minimax polynomials): within about
/// one unit in the last place over the ranges the modem uses (|x| < 2²⁰·π/2 for sine and
/// cosine).
enum ModemMath {
  // π/2 in three parts (33 + 33 + 53 bits): k·part stays exact for the k the modem uses.
  private static let halfPi1 = 1.570_796_326_734_125_614_17e+00
  private static let halfPi2 = 6.077_100_506_303_965_976_60e-11
  private static let halfPi3 = 2.022_266_248_795_950_631_54e-21
  private static let twoOverPi = 6.366_197_723_675_813_824_33e-01

  static func sin(_ x: Double) -> Double { sinCos(x).sin }

  static func cos(_ x: Double) -> Double { sinCos(x).cos }

  /// Both at once (one range reduction).
  static func sinCos(_ x: Double) -> (sin: Double, cos: Double) {
    guard x.isFinite else { return (.nan, .nan) }
    let k = (x * twoOverPi).rounded()
    let r = ((x - k * halfPi1) - k * halfPi2) - k * halfPi3
    let s = kernelSin(r)
    let c = kernelCos(r)
    switch Int(k.truncatingRemainder(dividingBy: 4)) {
    case 0: return (s, c)
    case 1, -3: return (c, -s)
    case 2, -2: return (-s, -c)
    default: return (-c, s)
    }
  }

  /// sin(r) for |r| ≤ π/4.
  private static func kernelSin(_ r: Double) -> Double {
    let z = r * r
    let p =
      -1.666_666_666_666_663_243_48e-01
      + z
      * (8.333_333_333_322_489_461_24e-03
        + z
        * (-1.984_126_982_985_794_931_34e-04
          + z
          * (2.755_731_370_707_006_767_89e-06
            + z * (-2.505_076_025_340_686_341_95e-08 + z * 1.589_690_995_211_550_102_21e-10))))
    return r + r * z * p
  }

  /// cos(r) for |r| ≤ π/4.
  private static func kernelCos(_ r: Double) -> Double {
    let z = r * r
    let p =
      4.166_666_666_666_660_190_37e-02
      + z
      * (-1.388_888_888_887_410_957_49e-03
        + z
        * (2.480_158_728_947_672_941_78e-05
          + z
          * (-2.755_731_435_139_066_330_35e-07
            + z * (2.087_572_321_298_174_827_90e-09 + z * -1.135_964_755_778_819_482_65e-11))))
    return 1 - 0.5 * z + z * z * p
  }

  private static let ln2High = 6.931_471_803_691_238_164_90e-01
  private static let ln2Low = 1.908_214_929_270_587_700_02e-10

  /// The natural logarithm: −∞ for 0, NaN for a negative number or NaN.
  static func log(_ x: Double) -> Double {
    guard x > 0 else { return x == 0 ? -.infinity : .nan }
    guard x.isFinite else { return x }
    // x = m·2ᵉ with m in [√½, √2).
    var m = x.significand
    var e = Double(x.exponent)
    if m > 1.414_213_562_373_095_145_47 {
      m *= 0.5
      e += 1
    }
    let f = m - 1
    let s = f / (2 + f)
    let z = s * s
    let w = z * z
    let odd =
      w
      * (3.999_999_999_940_941_908e-01
        + w * (2.222_219_843_214_978_396e-01 + w * 1.531_383_769_920_937_332e-01))
    let even =
      z
      * (6.666_666_666_666_735_130e-01
        + w
        * (2.857_142_874_366_239_149e-01
          + w * (1.818_357_216_161_805_012e-01 + w * 1.479_819_860_511_658_591e-01)))
    let r = odd + even
    let halfSquare = 0.5 * f * f
    return e * ln2High - ((halfSquare - (s * (halfSquare + r) + e * ln2Low)) - f)
  }

  /// The decimal logarithm.
  static func log10(_ x: Double) -> Double { log(x) * 4.342_944_819_032_518_166_68e-01 }

  /// The angle of (x, y) in radians, in [−π, π].
  static func atan2(_ y: Double, _ x: Double) -> Double {
    guard !x.isNaN, !y.isNaN else { return .nan }
    if x == 0 && y == 0 { return x.sign == .minus ? (y.sign == .minus ? -.pi : .pi) : y }
    let (ax, ay) = (abs(x), abs(y))
    // The angle within the first octant, then unfolded.
    var angle = ay <= ax ? atanUnit(ay / ax) : .pi / 2 - atanUnit(ax / ay)
    if x < 0 { angle = .pi - angle }
    return y < 0 ? -angle : angle
  }

  /// atan(t) for t in [0, 1]: folded to |u| ≤ tan(π/8) around π/4, then its series.
  private static func atanUnit(_ t: Double) -> Double {
    guard t.isFinite else { return .pi / 2 }
    if t > 0.414_213_562_373_095_1 {
      return .pi / 4 + atanSmall((t - 1) / (t + 1))
    }
    return atanSmall(t)
  }

  /// atan(u) for |u| ≤ tan(π/8): u·Σ (−u²)ⁿ/(2n+1), 24 terms (u² ≤ 0.172: the last is
  /// below 2⁻⁶⁰).
  private static func atanSmall(_ u: Double) -> Double {
    let z = u * u
    var sum = 0.0
    for n in stride(from: 23, through: 0, by: -1) {
      sum = 1 / Double(2 * n + 1) - z * sum
    }
    return u * sum
  }
}
