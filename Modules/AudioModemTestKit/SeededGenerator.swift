import Foundation

/// A small, fast, seedable generator (SplitMix64) so that simulations repeat exactly.
public struct SeededGenerator: RandomNumberGenerator, Sendable {
  private var state: UInt64

  public init(seed: UInt64) { state = seed }

  public mutating func next() -> UInt64 {
    state &+= 0x9e37_79b9_7f4a_7c15
    var z = state
    z = (z ^ (z >> 30)) &* 0xbf58_476d_1ce4_e5b9
    z = (z ^ (z >> 27)) &* 0x94d0_49bb_1331_11eb
    return z ^ (z >> 31)
  }

  /// A uniform value in [0, 1).
  public mutating func uniform() -> Double { Double(next() >> 11) * 0x1p-53 }

  /// A standard normal value (Box–Muller).
  public mutating func gaussian() -> Double {
    let u1 = max(uniform(), 1e-300)
    let u2 = uniform()
    return (-2 * log(u1)).squareRoot() * cos(2 * Double.pi * u2)
  }
}
