import Testing
import Tokens

@testable import LANMulticast

@Suite("Datagram")
struct DatagramTests {
  let token = Token(value: 0x0102_0304_0506_0708)

  @Test func roundTrips() throws {
    let datagram = Datagram(token: token, sentAt: 1_700_000_000_123, sender: 7, counter: 42)
    let bytes = datagram.encoded()
    #expect(bytes.count == Datagram.size)
    #expect(Array(bytes[0..<4]) == Array("NBYL".utf8))
    #expect(Array(bytes[8..<16]) == token.bytes)
    #expect(try Datagram(authenticating: bytes) == datagram)
  }

  /// Someone who does not hold token B cannot turn a datagram of token A into one of B.
  @Test func aSwappedTokenFailsTheMAC() {
    var bytes = Datagram(token: token, sentAt: 1, sender: 1, counter: 1).encoded()
    bytes[15] ^= 0x01
    #expect(throws: Datagram.Rejection.badMAC) { try Datagram(authenticating: bytes) }
  }

  @Test func anyAlteredByteIsRefused() {
    let good = Datagram(token: token, sentAt: 99, sender: 3, counter: 4).encoded()
    for index in 0..<Datagram.size {
      var bytes = good
      bytes[index] ^= 0x80
      #expect(throws: Datagram.Rejection.self) { try Datagram(authenticating: bytes) }
    }
  }

  @Test func aForgedMACIsRefused() {
    var bytes = Datagram(token: token, sentAt: 1, sender: 1, counter: 1).encoded()
    bytes.replaceSubrange(32..<40, with: [UInt8](repeating: 0, count: 8))
    #expect(throws: Datagram.Rejection.badMAC) { try Datagram(authenticating: bytes) }
  }

  @Test func otherTrafficIsRefused() {
    #expect(throws: Datagram.Rejection.wrongSize(5)) {
      try Datagram(authenticating: Array("hello".utf8))
    }
    var bytes = Datagram(token: token, sentAt: 1, sender: 1, counter: 1).encoded()
    bytes[0] = UInt8(ascii: "X")
    #expect(throws: Datagram.Rejection.notOurs) { try Datagram(authenticating: bytes) }
    bytes = Datagram(token: token, sentAt: 1, sender: 1, counter: 1).encoded()
    bytes[4] = 9
    #expect(throws: Datagram.Rejection.unknownVersion(9)) { try Datagram(authenticating: bytes) }
  }
}

@Suite("ReplayFilter")
struct ReplayFilterTests {
  let token = Token(value: 77)

  @Test func staleAndFutureDatagramsAreDropped() {
    var filter = ReplayFilter(maximumSkew: 1000, sightingInterval: 0)
    let now: UInt64 = 1_000_000
    #expect(
      filter.judge(.init(token: token, sentAt: now - 1001, sender: 1, counter: 1), now: now)
        == .stale)
    #expect(
      filter.judge(.init(token: token, sentAt: now + 1001, sender: 1, counter: 2), now: now)
        == .stale)
    #expect(
      filter.judge(.init(token: token, sentAt: now - 999, sender: 1, counter: 3), now: now)
        == .report)
  }

  @Test func aRepeatedDatagramIsDropped() {
    var filter = ReplayFilter(maximumSkew: 1000, sightingInterval: 0)
    let datagram = Datagram(token: token, sentAt: 500, sender: 9, counter: 1)
    #expect(filter.judge(datagram, now: 500) == .report)
    #expect(filter.judge(datagram, now: 510) == .repeated)
  }

  @Test func sightingsOfOneTokenAreSpacedOut() {
    var filter = ReplayFilter(maximumSkew: 10_000, sightingInterval: 1000)
    #expect(filter.judge(.init(token: token, sentAt: 0, sender: 1, counter: 1), now: 0) == .report)
    #expect(
      filter.judge(.init(token: token, sentAt: 500, sender: 1, counter: 2), now: 500) == .recent)
    #expect(
      filter.judge(.init(token: Token(value: 78), sentAt: 500, sender: 2, counter: 1), now: 500)
        == .report)
    #expect(
      filter.judge(.init(token: token, sentAt: 1000, sender: 1, counter: 3), now: 1000) == .report)
    filter.resetSightings()
    #expect(
      filter.judge(.init(token: token, sentAt: 1100, sender: 1, counter: 4), now: 1100) == .report)
  }

  @Test func forgetsTheOldestBeyondCapacity() {
    var filter = ReplayFilter(maximumSkew: 10_000, sightingInterval: 0, capacity: 4)
    let first = Datagram(token: token, sentAt: 0, sender: 1, counter: 0)
    #expect(filter.judge(first, now: 0) == .report)
    for counter in 1...4 {
      _ = filter.judge(.init(token: token, sentAt: 0, sender: 1, counter: UInt32(counter)), now: 0)
    }
    #expect(filter.judge(first, now: 0) == .report)
    #expect(
      filter.judge(.init(token: token, sentAt: 0, sender: 1, counter: 4), now: 0) == .repeated)
  }

  /// Issue 16: past its capacity the filter swept its whole table of reported tokens for
  /// every new token (quadratic work) and kept every token heard inside the clock window
  /// (unbounded memory). Fed 200 000 distinct senders and tokens inside the window, it stays
  /// at its capacity with a constant number of operations per datagram, and still refuses
  /// replays of the recent ones.
  @Test func staysBoundedPastItsCapacity() {
    var filter = ReplayFilter(maximumSkew: 30_000, sightingInterval: 1000)
    let start: UInt64 = 1_700_000_000_000
    let total = 200_000
    /// The datagram of sender `index`, sent at the time it is judged: 20 s in all.
    func datagram(_ index: Int, counter: UInt32 = 1) -> Datagram {
      Datagram(
        token: Token(value: UInt64(index) &* 0x9E37_79B9_7F4A_7C15),
        sentAt: start + UInt64(index / 10), sender: UInt32(index + 1), counter: counter)
    }
    for index in 0..<total {
      let verdict = filter.judge(datagram(index), now: start + UInt64(index / 10))
      let entries = filter.entries
      if verdict != .report || entries.pairs > filter.capacity
        || entries.tokens > filter.capacity
      {
        Issue.record("datagram \(index): \(verdict), \(entries) entries")
        return
      }
    }
    #expect(filter.entries.pairs == filter.capacity)
    #expect(filter.entries.tokens == filter.capacity)
    #expect(filter.operations <= 4 * total)
    let now = start + UInt64(total / 10)
    let recent = (total - 1000)..<total
    #expect(recent.allSatisfy { filter.judge(datagram($0), now: now) == .repeated })
    // A recent token heard again (a new counter) is still spaced out; one long forgotten is
    // reported again.
    #expect(filter.judge(datagram(total - 1, counter: 2), now: now) == .recent)
    #expect(filter.judge(datagram(0, counter: 2), now: now) == .report)
  }
}
