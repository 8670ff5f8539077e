@_spi(Resolver) import Core
import Foundation
import PeerResolution
import Strategy
import Testing
import Tokens

/// Two resolvers that hear each other over the LAN, digests beside the tokens (as the LAN
/// medium carries them in peer mode), on hand-moved time: once both have found, nothing
/// changing costs no datagram; a change reaches the other at once; one that stops hearing the
/// other makes it ask again, so neither side loses what is still near; silence loses both.
@Suite("Peer resolution: refreshes by digest")
struct PeerDigestTests {
  /// What every handle here uses: the LAN, which strategies opt in to.
  static let lan = Strategy(mediums: .lan)

  /// Alice and Bob, each publishing and subscribing, having found each other's message.
  func foundPair(
    _ f: PeerFixture, tokenLifetime: Duration = .seconds(120)
  ) async throws -> (PeerNode, PeerNode) {
    let alice = try await f.node(name: "alice", tokenLifetime: tokenLifetime)
    let bob = try await f.node(name: "bob", tokenLifetime: tokenLifetime)
    for (node, text) in [(alice, "Alice"), (bob, "Bob")] {
      try await node.publish(text, strategy: Self.lan)
      try await node.subscribe(strategy: Self.lan)
    }
    try await bob.hear(alice, on: .lan)
    try await alice.hear(bob, on: .lan)
    #expect(await bob.settled { $0.found == ["Alice"] })
    #expect(await alice.settled { $0.found == ["Bob"] })
    return (alice, bob)
  }

  /// Moves time one second at a time for `seconds`: each second `hearing` pairs hear each
  /// other on the LAN (the first of each pair hears the second), then both tick.
  func run(
    _ f: PeerFixture, seconds: Int, _ alice: PeerNode, _ bob: PeerNode,
    hearing pairs: [(PeerNode, PeerNode)]
  ) async throws {
    for _ in 0..<seconds {
      for (hearer, owner) in pairs { try await hearer.hear(owner, on: .lan) }
      await f.advance(1, alice, bob)
    }
  }

  @Test("nothing changing, both hearing each other: 150 s without a datagram, nothing lost")
  func steadyStateSendsNothing() async throws {
    let f = PeerFixture()
    // Longer than a token's binding at a hearer (the shadow expiry, 60 s, and the grace):
    // local refreshes bind it again as answers did.
    let (alice, bob) = try await foundPair(f, tokenLifetime: .seconds(900))
    // The first refreshes learn that each hears the other; from then on none is asked.
    try await run(f, seconds: 10, alice, bob, hearing: [(alice, bob), (bob, alice)])
    let before = (await alice.resolver.counters().sent, await bob.resolver.counters().sent)
    try await run(f, seconds: 150, alice, bob, hearing: [(alice, bob), (bob, alice)])
    let after = (await alice.resolver.counters().sent, await bob.resolver.counters().sent)
    #expect(after == before, "datagrams sent in a minute of nothing changing: \(before) → \(after)")
    #expect(await alice.resolver.counters().localRefreshes >= 40)
    #expect(await bob.resolver.counters().localRefreshes >= 40)
    #expect(alice.lost.isEmpty && bob.lost.isEmpty)
    await f.shutdown(alice, bob)
  }

  @Test("a publication in the steady state reaches the other at once, and so does its removal")
  func changeArrivesAtOnce() async throws {
    let f = PeerFixture()
    let (alice, bob) = try await foundPair(f)
    try await run(f, seconds: 30, alice, bob, hearing: [(alice, bob), (bob, alice)])
    let id = try await alice.publish("Alice again", strategy: Self.lan)
    // No time passes: the announcement's new digest, heard once, is enough.
    try await bob.hear(alice, on: .lan)
    #expect(await bob.settled { $0.found == ["Alice", "Alice again"] })
    try await alice.report(Report(unpublish: [id]))
    try await bob.hear(alice, on: .lan)
    #expect(await bob.settled { $0.lost == ["Alice again"] })
    #expect(alice.lost.isEmpty)
    await f.shutdown(alice, bob)
  }

  @Test("the change is found by its digest alone when the owner's unasked update is lost")
  func digestAloneFindsTheChange() async throws {
    let f = PeerFixture()
    let (alice, bob) = try await foundPair(f)
    // Long past the owner's memory of its hearers (15 s), were it not kept while heard.
    try await run(f, seconds: 30, alice, bob, hearing: [(alice, bob), (bob, alice)])
    await f.network.partition(alice.address, bob.address)
    try await alice.publish("Alice again", strategy: Self.lan)
    await f.settle()
    await f.network.heal(alice.address, bob.address)
    try await bob.hear(alice, on: .lan)
    #expect(await bob.settled { $0.found == ["Alice", "Alice again"] })
    await f.shutdown(alice, bob)
  }

  @Test("one stops hearing the other: it says so, the other asks again, and nothing is lost")
  func oneSidedHearingStaysFound() async throws {
    let f = PeerFixture()
    let (alice, bob) = try await foundPair(f)
    try await run(f, seconds: 10, alice, bob, hearing: [(alice, bob), (bob, alice)])
    // Bob stops hearing Alice; Alice still hears Bob. Bob finds Alice's message only through
    // Alice's questions now, which must resume well within lostAfter (10 s).
    try await run(f, seconds: 40, alice, bob, hearing: [(alice, bob)])
    #expect(bob.lost.isEmpty, "\(bob.lost)")
    #expect(alice.lost.isEmpty, "\(alice.lost)")
    #expect(await bob.resolver.counters().hearingLapses >= 1)
    await f.shutdown(alice, bob)
  }

  @Test(
    "the notice that one stopped hearing the other is lost: it is told again, and nothing is lost")
  func lostLapseNoticeIsSentAgain() async throws {
    let f = PeerFixture()
    let (alice, bob) = try await foundPair(f)
    try await run(f, seconds: 10, alice, bob, hearing: [(alice, bob), (bob, alice)])
    // Bob stops hearing Alice, and for 5 s nothing passes between them: his first notice
    // (after 3 s) is lost.
    await f.network.partition(alice.address, bob.address)
    try await run(f, seconds: 5, alice, bob, hearing: [(alice, bob)])
    await f.network.heal(alice.address, bob.address)
    try await run(f, seconds: 35, alice, bob, hearing: [(alice, bob)])
    #expect(bob.lost.isEmpty, "\(bob.lost)")
    #expect(await bob.resolver.counters().hearingLapses >= 2)
    await f.shutdown(alice, bob)
  }

  @Test(
    "a pair the owner's own hearing does not qualify: the hearer keeps asking",
    arguments: [DiscoveryMode.broadcast, [.broadcast, .scan]])
  func oneWayPairsKeepAsking(_ bobsMode: DiscoveryMode) async throws {
    let f = PeerFixture()
    let alice = try await f.node(name: "alice")
    let bob = try await f.node(name: "bob")
    // Bob's subscription finds Alice's scan-only publication only through Alice hearing
    // him (her questions), even though Bob hears Alice too (he scans for another type):
    // whether his subscription only broadcasts or also scans, her publication only scans.
    try await alice.publish("Alice", strategy: Strategy(mediums: .lan, mode: .scan))
    try await alice.subscribe(strategy: Self.lan)
    try await bob.publish("Bob", strategy: Self.lan)
    try await bob.subscribe(type: "name", strategy: Strategy(mediums: .lan, mode: bobsMode))
    try await bob.subscribe(type: "other", strategy: Self.lan)
    try await bob.hear(alice, on: .lan)
    try await alice.hear(bob, on: .lan)
    #expect(await bob.settled { $0.found == ["Alice"] })
    try await run(f, seconds: 40, alice, bob, hearing: [(alice, bob), (bob, alice)])
    #expect(bob.lost.isEmpty, "\(bob.lost)")
    #expect(await alice.resolver.counters().localRefreshes == 0)
    await f.shutdown(alice, bob)
  }

  @Test("a publication renewed with a new TTL in the steady state is not lost at its old expiry")
  func renewalIsLearnt() async throws {
    let f = PeerFixture()
    let alice = try await f.node(name: "alice", tokenLifetime: .seconds(900))
    let bob = try await f.node(name: "bob", tokenLifetime: .seconds(900))
    let first = try await alice.publish(
      "Alice", strategy: Strategy(mediums: .lan, ttl: try TTL(seconds: 60)))
    try await alice.subscribe(strategy: Self.lan)
    try await bob.publish("Bob", strategy: Self.lan)
    try await bob.subscribe(strategy: Self.lan)
    try await run(f, seconds: 20, alice, bob, hearing: [(alice, bob), (bob, alice)])
    #expect(bob.found == ["Alice"])
    // The same message again, for 300 s, in place of the first; the unasked update that
    // says so is lost, so only the digest (the expiry is in it) tells Bob.
    await f.network.partition(alice.address, bob.address)
    try await alice.report(
      Report(
        publish: [
          PublicationSpec(
            id: .random(), message: Message(text: "Alice", type: "name"),
            strategy: Strategy(mediums: .lan, ttl: try TTL(seconds: 300)))
        ], unpublish: [first]))
    await f.settle()
    await f.network.heal(alice.address, bob.address)
    // Past the first one's expiry (60 s after it was published) by half a minute.
    try await run(f, seconds: 70, alice, bob, hearing: [(alice, bob), (bob, alice)])
    let aliceEvents = bob.allEvents.compactMap { event -> String? in
      switch event.event {
      case .found(_, let message) where message.text == "Alice": "found"
      case .lost(_, let message) where message.text == "Alice": "lost"
      default: nil
      }
    }
    #expect(aliceEvents.last == "found", "\(aliceEvents)")
    await f.shutdown(alice, bob)
  }

  @Test("silence on both sides: both lose after lostAfter, as without digests")
  func silenceLosesBoth() async throws {
    let f = PeerFixture()
    let (alice, bob) = try await foundPair(f)
    try await run(f, seconds: 20, alice, bob, hearing: [(alice, bob), (bob, alice)])
    // Last heard a second ago: 9 s of silence, then 11.
    await f.advance(8, alice, bob)
    #expect(alice.lost.isEmpty && bob.lost.isEmpty)
    await f.advance(2, alice, bob)
    #expect(await bob.settled { $0.lost == ["Alice"] })
    #expect(await alice.settled { $0.lost == ["Bob"] })
    await f.shutdown(alice, bob)
  }
}
