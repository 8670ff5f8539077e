public import Tokens

/// `count` tokens from a generator seeded with `seed`, after the edge values (0, 1, 0xff, the
/// high bit alone, the largest two): the same list every run, for tests of what encodes or
/// carries tokens.
public func sampleTokens(count: Int, seed: UInt64) -> [Token] {
  var generator = SplitMix64(seed: seed)
  let edges: [UInt64] = [0, 1, 0xff, 0x0102_0304_0506_0708, 1 << 63, .max, .max - 1]
  return edges.map(Token.init(value:)) + (0..<count).map { _ in Token.random(using: &generator) }
}
