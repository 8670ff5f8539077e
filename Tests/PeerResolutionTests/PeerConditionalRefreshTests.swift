@_spi(Resolver) import Core
import Foundation
import MediumTestKit
import PeerResolution
import Strategy
import Testing
import Tokens

/// Two resolvers that hear each other on a medium with no digest beside its tokens (BLE, audio):
/// they refresh by questions, and each question names what the asker holds, so a refresh of
/// nothing changed carries neither side's handles; a change still arrives; an owner that
/// forgot the asker's handles gets them again; an unasked update counts only from where the
/// owner's answers come from.
@Suite("Peer resolution: refreshes that carry only what changed")
struct PeerConditionalRefreshTests {
  /// A message as large as one may be.
  static let large = Data(repeating: 0x5a, count: Message.maximumContentBytes)

  /// Alice publishing 100 KiB (or, not `large`, a short message) and Bob a short message,
  /// each subscribing, having found each other's message, hearing each other on BLE.
  func foundPair(_ f: PeerFixture, large: Bool = true) async throws -> (PeerNode, PeerNode) {
    let alice = try await f.node(name: "alice")
    let bob = try await f.node(name: "bob")
    try await alice.report(
      Report(publish: [
        PublicationSpec(
          id: .random(),
          message: large ? Message(content: Self.large, type: "large") : Message(text: "Alice"),
          strategy: .default)
      ]))
    try await bob.publish("Bob")
    try await alice.subscribe()
    try await bob.subscribe()
    try await bob.hear(alice)
    try await alice.hear(bob)
    #expect(await bob.settled { $0.found.count == 1 })
    #expect(await alice.settled { $0.found == ["Bob"] })
    return (alice, bob)
  }

  /// Moves time one second at a time for `seconds`, each hearing the other on BLE first.
  func run(
    _ f: PeerFixture, seconds: Int, _ alice: PeerNode, _ bob: PeerNode, bothHear: Bool = true
  ) async throws {
    for _ in 0..<seconds {
      try await bob.hear(alice)
      if bothHear { try await alice.hear(bob) }
      await f.advance(1, alice, bob)
    }
  }

  @Test("a minute of refreshes of an unchanged 100 KiB publication carries none of it, either way")
  func unchangedRefreshesCarryNoHandles() async throws {
    let f = PeerFixture(network: MemoryPeerNetwork(logCapacity: 4096, logByteCapacity: 16 << 20))
    let (alice, bob) = try await foundPair(f)
    try await run(f, seconds: 5, alice, bob)
    let logged = await f.network.log.count
    let before = (await alice.resolver.counters(), await bob.resolver.counters())
    try await run(f, seconds: 60, alice, bob)
    let after = (await alice.resolver.counters(), await bob.resolver.counters())
    let window = await f.network.log.dropFirst(logged)
    let bytes = window.reduce(0) { $0 + $1.bytes.count }
    let largest = window.map(\.bytes.count).max() ?? 0
    // Each side asks the other every 3 s: about 20 questions and 20 answers each way.
    #expect(after.0.sent - before.0.sent >= 30 && after.1.sent - before.1.sent >= 30)
    #expect(largest <= 512, "the largest datagram of the window: \(largest) bytes")
    // Before, each refresh carried the 100 KiB again: a minute now carries under a quarter.
    #expect(bytes < Self.large.count / 4, "\(window.count) datagrams, \(bytes) bytes")
    #expect(after.0.unchangedAnswers - before.0.unchangedAnswers >= 15)
    #expect(after.1.unchangedAnswers - before.1.unchangedAnswers >= 15)
    #expect(after.0.handlesLeftOut - before.0.handlesLeftOut >= 15)
    #expect(after.1.handlesLeftOut - before.1.handlesLeftOut >= 15)
    #expect(alice.lost.isEmpty && bob.lost.isEmpty)
    #expect(bob.found.count == 1 && alice.found == ["Bob"])
    await f.shutdown(alice, bob)
  }

  @Test("a change whose unasked update is lost arrives with the next refresh")
  func aChangeArrivesWithTheNextRefresh() async throws {
    let f = PeerFixture()
    let (alice, bob) = try await foundPair(f)
    try await run(f, seconds: 10, alice, bob)
    await f.network.partition(alice.address, bob.address)
    try await alice.publish("Alice again")
    await f.settle()
    await f.network.heal(alice.address, bob.address)
    // The next refresh names the digest Bob holds; Alice's differs: the whole set again.
    try await run(f, seconds: 4, alice, bob)
    #expect(bob.found.count == 2 && bob.found.last == "Alice again", "\(bob.found)")
    // And so does Bob's subscription changing: his question carries it, the answer is whole.
    try await bob.subscribe(type: "large")
    try await run(f, seconds: 4, alice, bob)
    #expect(bob.found.count == 3, "\(bob.found)")
    #expect(alice.lost.isEmpty && bob.lost.isEmpty)
    await f.shutdown(alice, bob)
  }

  @Test("an owner that forgot the asker's handles asks for them, and both find each other again")
  func forgottenHandlesAreSentAgain() async throws {
    let f = PeerFixture()
    let (alice, bob) = try await foundPair(f)
    try await run(f, seconds: 10, alice, bob)
    // Cut off for longer than the shadows last (60 s): each forgets the other, while still
    // hearing it (the radio hears; the exchange cannot reach).
    await f.network.partition(alice.address, bob.address)
    try await run(f, seconds: 70, alice, bob)
    #expect(bob.lost.count == 1 && alice.lost == ["Bob"])
    let wanted = (
      await alice.resolver.counters().handlesWanted,
      await bob.resolver.counters().handlesWanted
    )
    await f.network.heal(alice.address, bob.address)
    try await run(f, seconds: 20, alice, bob)
    #expect(bob.found.count == 2 && alice.found == ["Bob", "Bob"], "\(alice.found)")
    // The first question after the cut left the handles out, and was answered so.
    let after = (
      await alice.resolver.counters().handlesWanted,
      await bob.resolver.counters().handlesWanted
    )
    #expect(after.0 > wanted.0 && after.1 > wanted.1, "\(wanted) → \(after)")
    #expect(await alice.resolver.counters().handlesLeftOut > 0)
    #expect(await bob.resolver.counters().handlesLeftOut > 0)
    await f.shutdown(alice, bob)
  }

  @Test("an answer trimmed to fit names no digest: its hearer is never told 'unchanged'")
  func aTrimmedAnswerIsNeverUnchanged() async throws {
    // 2 KiB datagrams: 8 fragments carry about 15 KiB, so two 10 KiB publications do not fit.
    let f = PeerFixture(network: MemoryPeerNetwork(maximumDatagramSize: 2048))
    let alice = try await f.node(name: "alice")
    let bob = try await f.node(name: "bob")
    for type in ["first", "second"] {
      try await alice.report(
        Report(publish: [
          PublicationSpec(
            id: .random(), message: Message(content: Data(repeating: 1, count: 10_000), type: type),
            strategy: .default)
        ]))
    }
    try await bob.subscribe()
    try await bob.hear(alice)
    #expect(await bob.settled { $0.allEvents.count == 1 })
    try await run(f, seconds: 30, alice, bob, bothHear: false)
    #expect(await alice.resolver.counters().unchangedAnswers == 0)
    #expect(bob.lost.isEmpty)
    await f.shutdown(alice, bob)
  }

  @Test("an unasked update from another address of a key holder is not taken")
  func unaskedUpdatesCountOnlyFromTheOwnersAddress() async throws {
    let f = PeerFixture()
    // One datagram per message, none a fragment.
    let (alice, bob) = try await foundPair(f, large: false)
    try await run(f, seconds: 5, alice, bob)
    let mallory = await f.network.makeTransport(name: "mallory")
    await f.network.partition(alice.address, bob.address)
    let logged = await f.network.log.count
    try await alice.publish("Alice again")
    await f.settle()
    // Her unasked update (the header's kind byte says answer), beside her question.
    let update = try #require(
      await f.network.log.dropFirst(logged).first {
        $0.from == alice.address && $0.to == [bob.address]
          && $0.bytes[3] == PeerMessageKind.answer.rawValue
      })
    let before = await bob.resolver.counters()
    await f.network.inject(update.bytes, from: mallory.address, to: bob.address)
    await f.settle()
    let after = await bob.resolver.counters()
    #expect(after.accepted == before.accepted + 1, "it opened: a key holder's datagram")
    #expect(after.ignored == before.ignored + 1)
    #expect(bob.found.count == 1, "\(bob.found)")
    // The control: her next update, delivered from her own address, is taken.
    let next = await f.network.log.count
    try await alice.publish("Alice once more")
    await f.settle()
    let second = try #require(
      await f.network.log.dropFirst(next).first {
        $0.from == alice.address && $0.to == [bob.address]
          && $0.bytes[3] == PeerMessageKind.answer.rawValue
      })
    await f.network.inject(second.bytes, from: alice.address, to: bob.address)
    #expect(await bob.settled { $0.found.contains("Alice once more") }, "\(bob.found)")
    await mallory.shutdown()
    await f.shutdown(alice, bob)
  }
}
