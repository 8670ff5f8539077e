@_spi(Resolver) import Core
import Foundation
@testable import PeerResolution
import Strategy
import Testing
import Tokens

@Suite("Peer wire format, keys and limits")
struct PeerWireTests {
  let now = Date(timeIntervalSince1970: 1_800_000_000)
  let keys = PeerKeys(apiKey: "project-key")

  static let sampleQuery = PeerMessage.query(
    PeerQuery(
      queryID: 0x1122_3344_5566_7788, token: Token(value: 42), mediums: [.ble, .audio],
      sender: Identifier(high: 1, low: 2),
      handles: PeerHandles(
        publications: [
          PeerPublication(
            message: Message(text: "héllo", type: "name", namespace: "com.example"),
            strategy: Strategy(mediums: .audio, mode: .scan, ttl: try! TTL(seconds: 12.5)))
        ],
        subscriptions: [
          PeerSubscription(
            namespace: "", type: nil, strategy: Strategy(distanceType: .earshot, ttl: .infinite),
            deviceTypes: .nearbyDevices),
          PeerSubscription(
            namespace: "com.example", type: "name", strategy: .bleOnly,
            deviceTypes: .nearbyDevices),
        ])))

  @Test(
    "every kind survives sealing and opening unchanged",
    arguments: [
      PeerMessage.whoHas(queryID: 1, token: Token(value: 7)),
      .iHave(queryID: 2, token: Token(value: 8), cookie: 0xfeed),
      sampleQuery,
      .answer(
        PeerAnswer(
          queryID: 0, token: Token(value: 9), sender: Identifier(high: 3, low: 4),
          tokenValidFor: 130_000,
          publications: [
            PeerPublication(
              message: Message(content: Data(repeating: 0xab, count: 60_000)), strategy: .default)
          ])),
      .answer(
        PeerAnswer(
          queryID: 5, token: Token(value: 10), sender: Identifier(high: 5, low: 6),
          tokenValidFor: 1, publications: [], digest: HandlesDigest(0xfedc_ba98_7654_3210),
          hearsYou: [.lan, .ble])),
      .query(
        PeerQuery(
          queryID: 6, cookie: 7, token: Token(value: 11), mediums: .ble,
          sender: Identifier(high: 7, low: 8), knownDigest: HandlesDigest(0x0102),
          handlesDigest: HandlesDigest(0x0304), handles: nil)),
      .answer(
        PeerAnswer(
          queryID: 7, token: Token(value: 12), sender: Identifier(high: 9, low: 10),
          tokenValidFor: 2, publications: [], digest: HandlesDigest(0x0506), hearsYou: .ble,
          yours: HandlesDigest(0x0304), unchanged: true)),
      .answer(
        PeerAnswer(
          queryID: 8, token: Token(value: 13), sender: Identifier(high: 11, low: 12),
          tokenValidFor: 0, publications: [], handlesWanted: true)),
    ])
  func roundTrip(_ message: PeerMessage) throws {
    let sealer = PeerSealer(keys: keys)
    let datagram = try sealer.seal(kind: message.kind, body: message.body, now: now)
    let (header, body) = try sealer.open(datagram)
    #expect(header.kind == message.kind)
    #expect(header.sentAt == 1_800_000_000_000)
    #expect(try PeerMessage(kind: header.kind, body: body) == message)
  }

  @Test(
    "the handles' digest: changes with the token, the publications and the subscriptions, not with the TTL left; another project's differs"
  )
  func handlesDigest() throws {
    let sample = try #require(
      { if case .query(let query) = Self.sampleQuery { query.handles } else { nil } }())
    let token = Token(value: 42)
    let digest = keys.digest(token: token, handles: sample, at: now)
    #expect(keys.digest(token: token, handles: sample, at: now) == digest)
    // The TTL left changes every moment: only the expiry it gives is part of it.
    var later = sample
    later.publications[0].strategy.ttl = try TTL(seconds: 2.5)
    let subscriptionTTL = try #require(sample.subscriptions[1].strategy.ttl.seconds)
    later.subscriptions[1].strategy.ttl = try TTL(seconds: subscriptionTTL - 10)
    #expect(keys.digest(token: token, handles: later, at: now.addingTimeInterval(10)) == digest)
    #expect(keys.digest(token: token, handles: later, at: now) != digest)
    // A new token (a rotation): another digest, so nothing links the two.
    #expect(keys.digest(token: Token(value: 43), handles: sample, at: now) != digest)
    var published = sample
    published.publications.append(
      PeerPublication(message: Message(text: "more"), strategy: .default))
    #expect(keys.digest(token: token, handles: published, at: now) != digest)
    var content = sample
    content.publications[0].message = Message(text: "hello", type: "name", namespace: "com.example")
    #expect(keys.digest(token: token, handles: content, at: now) != digest)
    var unsubscribed = sample
    unsubscribed.subscriptions.removeLast()
    #expect(keys.digest(token: token, handles: unsubscribed, at: now) != digest)
    #expect(
      PeerKeys(apiKey: "another-project").digest(token: token, handles: sample, at: now) != digest)
    #expect(keys.digest(token: token, handles: PeerHandles(), at: now) != digest)
  }

  @Test(
    "a hearer's handles digest: one per owner token and hearer id, changes with the handles")
  func hearerHandlesDigest() throws {
    let sample = try #require(
      { if case .query(let query) = Self.sampleQuery { query.handles } else { nil } }())
    let token = Token(value: 42)
    let hearer = Identifier(high: 1, low: 2)
    let digest = keys.digest(of: sample, owner: token, hearer: hearer, at: now)
    #expect(keys.digest(of: sample, owner: token, hearer: hearer, at: now) == digest)
    #expect(keys.digest(of: sample, owner: Token(value: 43), hearer: hearer, at: now) != digest)
    #expect(
      keys.digest(of: sample, owner: token, hearer: Identifier(high: 1, low: 3), at: now)
        != digest)
    #expect(keys.digest(token: token, handles: sample, at: now) != digest)
    var fewer = sample
    fewer.subscriptions.removeFirst()
    #expect(keys.digest(of: fewer, owner: token, hearer: hearer, at: now) != digest)
  }

  @Test(
    "what leaves a part out must name it: handles left out without a digest, unchanged without one, publications beside a flag"
  )
  func leftOutPartsAreNamed() throws {
    func query(knownDigest: UInt64, handlesDigest: UInt64, flags: UInt8) -> [UInt8] {
      var writer = ByteWriter()
      writer.u64(1)
      writer.u64(0)
      writer.u64(2)
      writer.u32(0)
      writer.u64(3)
      writer.u64(4)
      writer.u64(knownDigest)
      writer.u64(handlesDigest)
      writer.u8(flags)
      return writer.bytes
    }
    #expect(throws: PeerWireError.invalid("handles left out without a digest")) {
      try PeerMessage(kind: .query, body: query(knownDigest: 5, handlesDigest: 0, flags: 1))
    }
    #expect(throws: PeerWireError.invalid("query flags")) {
      try PeerMessage(kind: .query, body: query(knownDigest: 5, handlesDigest: 6, flags: 2))
    }
    let leftOut = try PeerMessage(
      kind: .query, body: query(knownDigest: 0, handlesDigest: 6, flags: 1))
    guard case .query(let parsed) = leftOut else {
      Issue.record("not a query: \(leftOut)")
      return
    }
    #expect(parsed.handles == nil && parsed.knownDigest == nil)
    #expect(parsed.handlesDigest == HandlesDigest(6))

    func answer(digest: UInt64, flags: UInt8, publications: Int) -> [UInt8] {
      let publication = PeerMessage.answer(
        PeerAnswer(
          queryID: 1, token: Token(value: 1), sender: Identifier(high: 0, low: 0),
          tokenValidFor: 0,
          publications: [PeerPublication(message: Message(text: "x"), strategy: .default)])
      ).body.suffix(from: 8 + 8 + 16 + 8 + 4 + 8 + 4 + 8 + 1 + 1)
      var writer = ByteWriter()
      writer.u64(1)
      writer.u64(2)
      writer.u64(3)
      writer.u64(4)
      writer.u64(0)
      writer.u32(0)
      writer.u64(digest)
      writer.u32(0)
      writer.u64(0)
      writer.u8(flags)
      writer.u8(UInt8(publications))
      for _ in 0..<publications { writer.raw(Array(publication)) }
      return writer.bytes
    }
    #expect(throws: PeerWireError.invalid("unchanged without a digest")) {
      try PeerMessage(kind: .answer, body: answer(digest: 0, flags: 1, publications: 0))
    }
    #expect(throws: PeerWireError.invalid("answer flags")) {
      try PeerMessage(kind: .answer, body: answer(digest: 9, flags: 3, publications: 0))
    }
    #expect(throws: PeerWireError.invalid("answer flags")) {
      try PeerMessage(kind: .answer, body: answer(digest: 9, flags: 4, publications: 0))
    }
    for flags: UInt8 in [1, 2] {
      #expect(throws: PeerWireError.invalid("publications in an answer that carries none")) {
        try PeerMessage(kind: .answer, body: answer(digest: 9, flags: flags, publications: 1))
      }
    }
    // The fixture itself is a valid answer without the flags.
    #expect(throws: Never.self) {
      try PeerMessage(kind: .answer, body: answer(digest: 9, flags: 0, publications: 1))
    }
  }

  @Test("a datagram of the previous wire version is told apart, not misread")
  func previousVersionRefused() throws {
    let sealer = PeerSealer(keys: keys)
    let message = PeerMessage.whoHas(queryID: 1, token: Token(value: 7))
    var datagram = try sealer.seal(kind: message.kind, body: message.body, now: now)
    #expect(datagram[2] == PeerHeader.version)
    datagram[2] = PeerHeader.version - 1
    #expect(throws: PeerWireError.notPeerDatagram) {
      try PeerHeader(parsing: datagram, keys: keys)
    }
  }

  @Test("keys: the same API key gives the same keys; another key another tag and seal")
  func keyDerivation() throws {
    let again = PeerKeys(apiKey: "project-key")
    let other = PeerKeys(apiKey: "project-keY")
    #expect(again.sameProject(as: keys) && !other.sameProject(as: keys))
    #expect(again.announcementKey == keys.announcementKey)
    #expect(other.announcementKey != keys.announcementKey)
    let nonce = [UInt8](repeating: 7, count: 12)
    #expect(again.tag(nonce: nonce) == keys.tag(nonce: nonce))
    #expect(other.tag(nonce: nonce) != keys.tag(nonce: nonce))
    let datagram = try PeerSealer(keys: keys).seal(
      kind: .whoHas, body: PeerMessage.whoHas(queryID: 1, token: Token(value: 1)).body, now: now)
    // The API key is nowhere in the datagram, and another project cannot open it.
    #expect(!datagram.contains(subsequence: Array("project-key".utf8)))
    #expect(throws: PeerWireError.otherProject) { try PeerSealer(keys: other).open(datagram) }
    // Another project's tag made right for this nonce still cannot open it.
    var forgedTag = datagram
    forgedTag.replaceSubrange(20..<28, with: other.tag(nonce: Array(datagram[8..<20])))
    #expect(throws: PeerWireError.unauthenticated) { try PeerSealer(keys: other).open(forgedTag) }
  }

  /// Issue 39: the project tag was the same 8 bytes in every header of a project, and bodies
  /// were not padded: a listener without the key linked a project's devices across token
  /// rotations and networks by the tag, and told messages apart by their exact lengths.
  @Test("nothing in the clear is constant beyond the format: tags per nonce, padded lengths")
  func nothingConstantInTheClear() throws {
    let sealer = PeerSealer(keys: keys)
    let whoHas = PeerMessage.whoHas(queryID: 1, token: Token(value: 1))
    let first = try sealer.seal(kind: .whoHas, body: whoHas.body, now: now)
    let second = try sealer.seal(kind: .whoHas, body: whoHas.body, now: now)
    // The format (magic, version, kind, flags) is all the two share in the clear.
    #expect(first[0..<8] == second[0..<8])
    #expect(!Self.shareARun(Array(first[8...]), Array(second[8...]), length: 4))
    #expect(try sealer.open(first).1 == whoHas.body)
    // Lengths come in buckets: a who-has, an iHave and a query without handles all take
    // 128 bytes; larger messages the next power of two, the transport's limit at most.
    let iHave = PeerMessage.iHave(queryID: 1, token: Token(value: 1), cookie: 2)
    let bare = PeerMessage.query(
      PeerQuery(
        queryID: 1, token: Token(value: 1), mediums: .lan, sender: Identifier(high: 1, low: 1),
        handles: PeerHandles()))
    for message in [whoHas, iHave, bare] {
      #expect(try sealer.seal(kind: message.kind, body: message.body, now: now).count == 128)
    }
    let sizes = try [200, 900, 1_300, 5_000].map {
      try sealer.seal(kind: .answer, body: [UInt8](repeating: 1, count: $0), now: now).count
    }
    #expect(sizes == [256, 1_024, 2_048, 8_192])
    let capped = try sealer.seal(
      kind: .answer, body: [UInt8](repeating: 1, count: 5_000), now: now, limit: 6_000)
    #expect(capped.count == 6_000)
    #expect(try sealer.open(capped).1.count == 5_000)
  }

  /// Whether `a` and `b` have `length` equal bytes in a row anywhere.
  static func shareARun(_ a: [UInt8], _ b: [UInt8], length: Int) -> Bool {
    guard a.count >= length, b.count >= length else { return false }
    let runs = Set((0...(a.count - length)).map { Array(a[$0..<$0 + length]) })
    return (0...(b.count - length)).contains { runs.contains(Array(b[$0..<$0 + length])) }
  }

  @Test("the header is authenticated and the send time sealed: changing either breaks the seal")
  func headerAuthenticated() throws {
    let sealer = PeerSealer(keys: keys)
    let datagram = try sealer.seal(
      kind: .whoHas, body: PeerMessage.whoHas(queryID: 1, token: Token(value: 1)).body, now: now)
    // The send time is not in the clear (a clock's skew would link a device's datagrams).
    let time = withUnsafeBytes(of: PeerClock.milliseconds(now).bigEndian) { Array($0) }
    #expect(!datagram.contains(subsequence: time))
    var later = datagram
    later[35] ^= 1
    #expect(throws: PeerWireError.unauthenticated) { try sealer.open(later) }
    var kind = datagram
    kind[3] = PeerMessageKind.iHave.rawValue
    #expect(throws: PeerWireError.unauthenticated) { try sealer.open(kind) }
    var version = datagram
    version[2] = 1
    #expect(throws: PeerWireError.notPeerDatagram) { try sealer.open(version) }
    #expect(throws: PeerWireError.truncated) { try sealer.open(Array(datagram.prefix(51))) }
  }

  @Test("bodies past a limit or with trailing bytes are refused")
  func limits() throws {
    var body = Self.sampleQuery.body
    #expect(throws: PeerWireError.invalid("trailing bytes")) {
      try PeerMessage(kind: .query, body: body + [0])
    }
    #expect(throws: PeerWireError.truncated) {
      try PeerMessage(kind: .query, body: Array(body.dropLast()))
    }
    // 65 publications in an answer: one past the limit.
    var writer = ByteWriter()
    writer.u64(1)
    writer.u64(2)
    writer.u64(3)
    writer.u64(4)
    writer.u64(5)
    writer.u32(0)
    writer.u64(0)
    writer.u32(0)
    writer.u64(0)
    writer.u8(0)
    writer.u8(UInt8(PeerLimits.maximumPublications + 1))
    #expect(throws: PeerWireError.tooLarge("publications")) {
      try PeerMessage(kind: .answer, body: writer.bytes)
    }
    // A content length past 100 KiB is refused before anything is read.
    body =
      PeerMessage.answer(
        PeerAnswer(
          queryID: 1, token: Token(value: 1), sender: Identifier(high: 0, low: 0), tokenValidFor: 0,
          publications: [PeerPublication(message: Message(text: "x"), strategy: .default)])
      ).body
    let contentLength = 8 + 8 + 16 + 8 + 4 + 8 + 4 + 8 + 1 + 1
    body.replaceSubrange(contentLength..<contentLength + 4, with: [0, 0x01, 0x90, 0x01])
    #expect(throws: PeerWireError.tooLarge("content")) {
      try PeerMessage(kind: .answer, body: body)
    }
  }

  @Test("invalid values are refused: a strategy with no mode, a bad namespace, unknown mediums")
  func invalidValues() throws {
    let noMode = PeerMessage.answer(
      PeerAnswer(
        queryID: 1, token: Token(value: 1), sender: Identifier(high: 0, low: 0), tokenValidFor: 0,
        publications: [
          PeerPublication(message: Message(text: "x"), strategy: Strategy(mode: []))
        ]))
    #expect(throws: PeerWireError.invalid("strategy")) {
      try PeerMessage(kind: .answer, body: noMode.body)
    }
    let badNamespace = PeerMessage.query(
      PeerQuery(
        queryID: 1, token: Token(value: 1), mediums: .ble, sender: Identifier(high: 0, low: 0),
        handles: PeerHandles(subscriptions: [
          PeerSubscription(
            namespace: "no spaces", type: nil, strategy: .default, deviceTypes: .nearbyDevices)
        ])))
    #expect(throws: PeerWireError.invalid("subscription filter")) {
      try PeerMessage(kind: .query, body: badNamespace.body)
    }
    var unknownMediums = Self.sampleQuery.body
    unknownMediums[24] = 0x80
    #expect(throws: PeerWireError.invalid("mediums")) {
      try PeerMessage(kind: .query, body: unknownMediums)
    }
  }

  @Test("the replay guard: a window of ±30 s, each nonce once, memory bounded")
  func replayGuard() {
    var guardian = ReplayGuard(capacity: 2)
    #expect(guardian.isFresh(sentAt: 100_000, now: 130_000))
    #expect(!guardian.isFresh(sentAt: 100_000, now: 130_001))
    #expect(!guardian.isFresh(sentAt: 130_001, now: 100_000))
    let a = [UInt8](repeating: 1, count: 12)
    let b = [UInt8](repeating: 2, count: 12)
    let c = [UInt8](repeating: 3, count: 12)
    var verdicts: [Bool] = []
    for nonce in [a, a, b, c] { verdicts.append(guardian.admit(nonce: nonce)) }
    // The third nonce made the guard forget the first.
    #expect(verdicts == [true, false, true, true])
    #expect(guardian.count == 2)
    let again = [guardian.admit(nonce: c), guardian.admit(nonce: a)]
    #expect(again == [false, true])
  }

  @Test("the rate limiter: a burst, then the sustained rate, per sender; senders bounded")
  func rateLimiter() {
    var limiter = SenderRateLimiter(perSecond: 2, burst: 3, capacity: 2)
    let one = PeerAddress(transport: "memory", bytes: [1])!
    let two = PeerAddress(transport: "memory", bytes: [2])!
    let three = PeerAddress(transport: "memory", bytes: [3])!
    var burst: [Bool] = []
    for _ in 0..<4 { burst.append(limiter.admit(one, now: 0)) }
    #expect(burst == [true, true, true, false])
    // Half a second refills one; another sender has its own bucket.
    let later = [
      limiter.admit(two, now: 0), limiter.admit(one, now: 0.5), limiter.admit(one, now: 0.5),
    ]
    #expect(later == [true, true, false])
    // A third sender makes the limiter forget the first, which starts with a full bucket.
    let third = limiter.admit(three, now: 0.5)
    #expect(third && limiter.count == 2)
    let fresh = limiter.admit(one, now: 0.5)
    #expect(fresh)
  }

  @Test("a byte budget: costs are taken whole or not at all; one over the burst never passes")
  func byteBudget() {
    var budget = SenderRateLimiter(perSecond: 100, burst: 1_000)
    let one = PeerAddress(transport: "memory", bytes: [1])!
    let two = PeerAddress(transport: "memory", bytes: [2])!
    let taken = [
      budget.admit(one, cost: 600, now: 0), budget.admit(one, cost: 600, now: 0),
      budget.admit(one, cost: 400, now: 0), budget.admit(one, cost: 100, now: 1),
      budget.admit(two, cost: 1_001, now: 1),
    ]
    #expect(taken == [true, false, true, true, false])
  }

  @Test("peer addresses are bounded, and decoding checks the bounds")
  func addresses() throws {
    #expect(PeerAddress(transport: "", bytes: [1]) == nil)
    #expect(PeerAddress(transport: "lan", bytes: []) == nil)
    #expect(PeerAddress(transport: "lan", bytes: Array(repeating: 0, count: 65)) == nil)
    #expect(PeerAddress(transport: String(repeating: "x", count: 17), bytes: [1]) == nil)
    let address = try #require(PeerAddress(transport: "lan", bytes: [10, 0, 0, 1, 0x1c, 0x04]))
    #expect(address.description == "lan:0a0000011c04")
    let json = try JSONEncoder().encode(address)
    #expect(try JSONDecoder().decode(PeerAddress.self, from: json) == address)
    let tooLong = Data(
      #"{"transport":"lan","bytes":[\#(Array(repeating: "1", count: 65).joined(separator: ","))]}"#
        .utf8)
    #expect(throws: DecodingError.self) {
      try JSONDecoder().decode(PeerAddress.self, from: tooLong)
    }
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
