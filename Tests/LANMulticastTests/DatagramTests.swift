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
}
