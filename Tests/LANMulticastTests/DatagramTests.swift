import Crypto
import Testing
import Tokens

@testable import LANMulticast

@Suite("Datagram")
struct DatagramTests {
  let token = Token(value: 0x0102_0304_0506_0708)
  let siteKey = LANMulticastKey.random().symmetricKey

  @Test(arguments: [false, true])
  func roundTrips(keyed: Bool) throws {
    let key = keyed ? siteKey : nil
    let datagram = Datagram(
      token: token, sentAt: 1_700_000_000_123, sender: 7, counter: 42, peerPort: 0x1c05)
    let bytes = datagram.encoded(key: key)
    #expect(bytes.count == (keyed ? Datagram.sealedSize : Datagram.size))
    // What the configuration tells an operator sizing the traffic is what goes on the wire.
    #expect(
      bytes.count
        == (keyed
          ? LANMulticastConfiguration.sealedAnnouncementSize
          : LANMulticastConfiguration.announcementSize))
    #expect([40, 64].contains(bytes.count))
    #expect(Array(bytes[0..<4]) == Array("NBYL".utf8))
    #expect(bytes[4] == (keyed ? 3 : 2))
    #expect(bytes[5] == (keyed ? 1 : 0))
    #expect(bytes.contains(subsequence: token.bytes) == !keyed)
    #expect(try Datagram(checking: bytes, key: key) == datagram)
  }

  @Test func aDigestRidesSealedInVersionFour() throws {
    var datagram = Datagram(
      token: token, sentAt: 1_700_000_000_123, sender: 7, counter: 42, peerPort: 0x1c05,
      digest: 0x0102_0304_0506_0708)
    let bytes = datagram.encoded(key: siteKey)
    #expect(bytes.count == Datagram.digestSize)
    #expect(bytes.count == LANMulticastConfiguration.digestAnnouncementSize)
    #expect(bytes[4] == 4)
    // Sealed: neither the token nor the digest is in the clear.
    #expect(!bytes.contains(subsequence: token.bytes))
    #expect(!bytes.contains(subsequence: [1, 2, 3, 4, 5, 6, 7, 8]))
    #expect(try Datagram(checking: bytes, key: siteKey) == datagram)
    for index in 0..<bytes.count {
      var altered = bytes
      altered[index] ^= 0x80
      #expect(throws: Datagram.Rejection.self) { try Datagram(checking: altered, key: siteKey) }
    }
    // Another key's: refused. Without a key, never sent: anyone could forge it.
    #expect(throws: Datagram.Rejection.badTag) {
      try Datagram(checking: bytes, key: LANMulticastKey.random().symmetricKey)
    }
    let unkeyed = datagram.encoded(key: nil)
    #expect(unkeyed.count == Datagram.size)
    datagram.digest = 0
    #expect(try Datagram(checking: unkeyed, key: nil) == datagram)
    // A version-4 datagram cut to version 3's size is refused, not read as one.
    var cut = Array(bytes.prefix(Datagram.sealedSize))
    #expect(throws: Datagram.Rejection.wrongSize(Datagram.sealedSize)) {
      try Datagram(checking: cut, key: siteKey)
    }
    cut[4] = 3
    #expect(throws: Datagram.Rejection.badTag) { try Datagram(checking: cut, key: siteKey) }
  }

  @Test func aNewDigestIsReportedAtOnce() {
    var filter = ReplayFilter(maximumSkew: 10_000, sightingInterval: 1000)
    func heard(_ counter: UInt32, digest: UInt64, at now: UInt64) -> ReplayFilter.Verdict {
      filter.judge(
        .init(token: token, sentAt: now, sender: 1, counter: counter, digest: digest), now: now)
    }
    #expect(heard(1, digest: 5, at: 0) == .report)
    #expect(heard(2, digest: 5, at: 250) == .recent)
    // The sender's handles changed: its hearers must learn it now, not in a second.
    #expect(heard(3, digest: 6, at: 500) == .report)
    #expect(heard(4, digest: 6, at: 750) == .recent)
    #expect(heard(5, digest: 6, at: 1500) == .report)
  }

  @Test(arguments: [false, true])
  func anyAlteredByteIsRefused(keyed: Bool) {
    let key = keyed ? siteKey : nil
    let good = Datagram(token: token, sentAt: 99, sender: 3, counter: 4).encoded(key: key)
    for index in 0..<good.count {
      var bytes = good
      bytes[index] ^= 0x80
      #expect(throws: Datagram.Rejection.self) { try Datagram(checking: bytes, key: key) }
    }
    var swapped = good
    swapped[keyed ? 30 : 15] ^= 0x01
    #expect(throws: keyed ? Datagram.Rejection.badTag : .badChecksum) {
      try Datagram(checking: swapped, key: key)
    }
  }

  /// Issue 39: with a key, a listener learns that somebody runs nearby and nothing that links
  /// two announcements: not the token, the send time (a clock's skew), the peer port, nor
  /// anything constant but the format (version 2 showed them all, and the check was an HMAC
  /// of bytes in the clear).
  @Test func aSealedAnnouncementShowsNothingButTheFormat() throws {
    let sentAt: UInt64 = 1_700_000_000_123
    let first = Datagram(token: token, sentAt: sentAt, sender: 7, counter: 1, peerPort: 0x1c05)
      .encoded(key: siteKey)
    let next = Datagram(
      token: Token(value: 0x1112_1314_1516_1718), sentAt: sentAt + 250, sender: 9, counter: 1,
      peerPort: 0x1c05
    ).encoded(key: siteKey)
    let time = (0..<8).map { UInt8(truncatingIfNeeded: sentAt >> (56 - 8 * $0)) }
    #expect(!first.contains(subsequence: Array(time.prefix(5))))
    #expect(!first.contains(subsequence: [0x1c, 0x05]) || first[6..<8] != [0x1c, 0x05])
    #expect(first[0..<8] == next[0..<8])
    let runs = Set((8...(first.count - 4)).map { Array(first[$0..<$0 + 4]) })
    #expect(!(8...(next.count - 4)).contains { runs.contains(Array(next[$0..<$0 + 4])) })
  }

  /// Issue 16: version 1 keyed its MAC by the token, which travels in the clear, so whoever
  /// heard one datagram could make more that every receiver accepted. With a site key, a
  /// hearer who does not hold it cannot: not with a checksum, not under a key of its own,
  /// not by reusing a heard seal.
  @Test func aHearerWithoutTheSiteKeyCannotForge() {
    let heard = Datagram(token: token, sentAt: 1000, sender: 5, counter: 1).encoded(key: siteKey)
    let forged = Datagram(token: token, sentAt: 1250, sender: 5, counter: 2)
    #expect(throws: Datagram.Rejection.missingTag) {
      try Datagram(checking: forged.encoded(key: nil), key: siteKey)
    }
    let otherKey = LANMulticastKey.random().symmetricKey
    #expect(throws: Datagram.Rejection.badTag) {
      try Datagram(checking: forged.encoded(key: otherKey), key: siteKey)
    }
    var reused = forged.encoded(key: siteKey)
    reused.replaceSubrange(48..<64, with: heard[48..<64])
    #expect(throws: Datagram.Rejection.badTag) { try Datagram(checking: reused, key: siteKey) }
    // The heard datagram's header on another body, and its seal on another header.
    var spliced = heard
    spliced[6] = 1
    #expect(throws: Datagram.Rejection.badTag) { try Datagram(checking: spliced, key: siteKey) }
  }

  /// Without a site key the check is a checksum, not authentication: anyone who heard a token
  /// makes a datagram for it that is accepted. This is what the docs say; the test keeps
  /// them honest.
  @Test func withoutASiteKeyTheCheckIsOnlyAChecksum() throws {
    let forged = Datagram(token: token, sentAt: 1, sender: 66, counter: 1)
    #expect(try Datagram(checking: forged.encoded(key: nil), key: nil) == forged)
    // Keyed and unkeyed peers do not hear each other.
    #expect(throws: Datagram.Rejection.keyedElsewhere) {
      try Datagram(checking: forged.encoded(key: siteKey), key: nil)
    }
  }

  @Test func otherTrafficIsRefused() {
    #expect(throws: Datagram.Rejection.wrongSize(5)) {
      try Datagram(checking: Array("hello".utf8), key: nil)
    }
    var bytes = Datagram(token: token, sentAt: 1, sender: 1, counter: 1).encoded(key: nil)
    bytes[0] = UInt8(ascii: "X")
    #expect(throws: Datagram.Rejection.notOurs) { try Datagram(checking: bytes, key: nil) }
    for version: UInt8 in [1, 9] {
      bytes = Datagram(token: token, sentAt: 1, sender: 1, counter: 1).encoded(key: nil)
      bytes[4] = version
      #expect(throws: Datagram.Rejection.unknownVersion(version)) {
        try Datagram(checking: bytes, key: nil)
      }
    }
  }

  @Test func aSiteKeyIsCheckedAndNeverPrinted() throws {
    #expect(throws: LANMulticastError.self) {
      try LANMulticastKey(bytes: [UInt8](repeating: 1, count: 15))
    }
    #expect(throws: LANMulticastError.self) { try LANMulticastKey(hex: "not hex") }
    let key = LANMulticastKey.random()
    #expect(try LANMulticastKey(hex: key.hex + "\n") == key)
    #expect(key != LANMulticastKey.random())
    #expect(!"\(key)".contains(key.hex) && !"\(key)".contains(String(key.hex.prefix(8))))
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

extension Array where Element == UInt8 {
  fileprivate func contains(subsequence: [UInt8]) -> Bool {
    guard subsequence.count <= count else { return false }
    return (0...(count - subsequence.count)).contains {
      Array(self[$0..<$0 + subsequence.count]) == subsequence
    }
  }
}
