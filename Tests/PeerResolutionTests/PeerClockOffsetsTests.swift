import Core
import PeerResolution
import Testing

@Suite("Clock offsets and send stamps")
struct PeerClockOffsetsTests {
  let bob = PeerAddress(transport: "memory", bytes: [1])!
  let carol = PeerAddress(transport: "memory", bytes: [2])!
  let now: UInt64 = 1_800_000_000_000

  @Test("a stamp is the time in the peer's clock as learnt")
  func stampInThePeersClock() {
    var offsets = PeerClockOffsets()
    #expect(offsets.stamp(for: bob, now: now) == now)
    offsets.learn(bob, sentAt: now + 120_000 + 1_000, now: now + 1_000)
    #expect(offsets.offset(of: bob) == 120_000)
    #expect(offsets.stamp(for: bob, now: now + 2_000) == now + 122_000)
    #expect(offsets.stamp(for: carol, now: now + 2_000) == now + 2_000)
  }

  @Test("an offset learnt from a slow answer does not send a later stamp before an earlier one")
  func stampsKeepTheirOrder() {
    var offsets = PeerClockOffsets()
    let first = offsets.stamp(for: bob, now: now)
    // Bob's answer took 800 ms: his clock looks 800 ms behind ours.
    offsets.learn(bob, sentAt: now - 300, now: now + 500)
    let second = offsets.stamp(for: bob, now: now + 500)
    #expect(second == first)
    #expect(offsets.stamp(for: bob, now: now + 900) == now + 100)
    #expect(offsets.stamp(for: bob, now: now + 900) == now + 100)
  }

  @Test("a clock found minutes off is followed, order or not (a stamp must pass its window)")
  func largeCorrectionsAreFollowed() {
    var offsets = PeerClockOffsets()
    _ = offsets.stamp(for: bob, now: now)
    offsets.learn(bob, sentAt: now - 120_000, now: now)
    let stamp = offsets.stamp(for: bob, now: now + 10)
    #expect(stamp == now - 120_000 + 10)
    #expect(PeerClockOffsets.orderingAllowance < PeerLimits.clockWindowMilliseconds)
  }

  @Test("at most `capacity` peers are kept; the first added is forgotten first")
  func bounded() {
    var offsets = PeerClockOffsets(capacity: 2)
    let dave = PeerAddress(transport: "memory", bytes: [3])!
    offsets.learn(bob, sentAt: now + 5, now: now)
    offsets.learn(carol, sentAt: now + 6, now: now)
    offsets.learn(dave, sentAt: now + 7, now: now)
    #expect(offsets.count == 2)
    #expect(offsets.offset(of: bob) == 0)
    #expect(offsets.offset(of: carol) == 6 && offsets.offset(of: dave) == 7)
  }
}
