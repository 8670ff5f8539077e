import Foundation
public import Tokens

/// The distributions the channel simulations draw from, over the seeded generator so that a
/// simulation repeats exactly.
extension SplitMix64 {
  /// A uniform value in [0, 1).
  public mutating func uniform() -> Double { Double(next() >> 11) * 0x1p-53 }

  /// A standard normal value (Box–Muller).
  public mutating func gaussian() -> Double {
    let u1 = max(uniform(), 1e-300)
    let u2 = uniform()
    return (-2 * log(u1)).squareRoot() * cos(2 * Double.pi * u2)
  }
}
