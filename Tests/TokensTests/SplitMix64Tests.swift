import Testing
import Tokens

@Suite("SplitMix64")
struct SplitMix64Tests {
  /// The reference sequence for seed 0 (Vigna's splitmix64.c).
  @Test func matchesTheReference() {
    var generator = SplitMix64(seed: 0)
    #expect(generator.next() == 0xe220_a839_7b1d_cdaf)
    #expect(generator.next() == 0x6e78_9e6a_a1b9_65f4)
    #expect(generator.next() == 0x06c4_5d18_8009_454f)
  }

  @Test func aSeedRepeats() {
    var first = SplitMix64(seed: 42)
    var second = SplitMix64(seed: 42)
    #expect((0..<100).map { _ in first.next() } == (0..<100).map { _ in second.next() })
  }
}
