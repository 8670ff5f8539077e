/// A small, fast, seedable generator (SplitMix64, Steele, Lea and Flood 2014), so that
/// simulations and randomized tests repeat exactly from their seed.
///
/// Not cryptographic: tokens come from `SystemRandomNumberGenerator`. A value type with no
/// shared state; each copy continues its own sequence.
public struct SplitMix64: RandomNumberGenerator, Sendable {
  private var state: UInt64

  /// A generator whose sequence is fixed by `seed`.
  public init(seed: UInt64) { state = seed }

  /// The next 64 random bits.
  public mutating func next() -> UInt64 {
    state &+= 0x9e37_79b9_7f4a_7c15
    var z = state
    z = (z ^ (z >> 30)) &* 0xbf58_476d_1ce4_e5b9
    z = (z ^ (z >> 27)) &* 0x94d0_49bb_1331_11eb
    return z ^ (z >> 31)
  }
}
