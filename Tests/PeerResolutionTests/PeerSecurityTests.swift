@_spi(Resolver) import Core
import Foundation
import MediumTestKit
import Resolution
import Strategy
import TestSupport
import Testing
import Tokens

@testable import PeerResolution
import NearbyTesting

/// Issue 39: what a host on the segment can make a device send to an address it names, and
/// what it can keep a device from, with and without the project key.
@Suite("Peer resolver against a forger on the segment")
struct PeerSecurityTests {
  /// The bytes sent to `address` alone so far (multicasts, which reach every device of the
  /// segment whatever anyone forges, not counted).
  static func bytesSent(to address: PeerAddress, in network: MemoryPeerNetwork) async -> Int {
    await network.log.filter { $0.to == [address] }.reduce(0) { $0 + $1.bytes.count }
  }

  @Test("a forged way back gets a probe no larger than 3× an announcement, never the query")
  func aForgedWayBackGetsAProbeOnly() async throws {
    let f = PeerFixture()
    let alice = try await f.node(name: "alice")
    let bob = try await f.node(name: "bob")
    // The victim: a host that runs nothing of ours.
    let victim = await f.network.makeTransport(name: "victim")
    try await alice.publish("Alice")
    for index in 0..<3 { try await bob.publish("Bob's \(index)", strategy: .default) }
    try await bob.subscribe()
    // Bob hears Alice's token with the victim's address as its way back (as from a forged
    // LAN announcement, 64 bytes sealed, 40 unkeyed).
    try await bob.report(
      Report(sightings: [
        Sighting(
          token: try await alice.token(), medium: .ble, time: bob.now, returnPath: victim.address)
      ]))
    await f.settle()
    #expect(await Self.bytesSent(to: victim.address, in: f.network) > 0)
    let probe = await Self.bytesSent(to: victim.address, in: f.network)
    #expect(probe == 128, "the victim got \(probe) bytes")
    #expect(probe <= 3 * 64)
    // Unanswered: everyone is asked, Alice answers, Bob finds her; the victim got nothing
    // more, and gets nothing more from the refreshes.
    await f.advance(1, alice, bob)
    #expect(await bob.answered())
    #expect(await bob.settled { $0.found == ["Alice"] })
    for _ in 0..<4 {
      await f.advance(4, alice, bob)
      try await bob.report(
        Report(sightings: [
          Sighting(
            token: try await alice.token(), medium: .ble, time: bob.now,
            returnPath: victim.address)
        ]))
      #expect(await bob.answered())
    }
    #expect(await Self.bytesSent(to: victim.address, in: f.network) == probe)
    await f.shutdown(alice, bob)
  }

  @Test("a query relayed from a forged source gets an iHave no larger than itself, not the answer")
  func aRelayedQueryIsNotAnswered() async throws {
    let f = PeerFixture()
    let alice = try await f.node(name: "alice")
    let bob = try await f.node(name: "bob")
    let victim = await f.network.makeTransport(name: "victim")
    for index in 0..<3 {
      try await alice.publish(String(repeating: "\(index)", count: 1_200))
    }
    try await bob.subscribe()
    try await bob.hear(alice)
    #expect(await bob.answered())
    #expect(await bob.settled { $0.found.count == 3 })
    // Bob's query with its cookie (the last datagram Bob sent Alice), captured and relayed
    // from the victim's address before the replay guard could see it: a fresh nonce needs the
    // key, so the attacker replays the capture to another device of the project instead.
    let carol = try await f.node(name: "carol")
    try await carol.publish("Carol")
    let query = try #require(
      await f.network.log.last { $0.from == bob.address && $0.to == [alice.address] })
    let answered = await Self.bytesSent(to: bob.address, in: f.network)
    await f.network.inject(query.bytes, from: victim.address, to: alice.address)
    // Stale or replayed: Alice has seen its nonce: nothing at all.
    await f.settle()
    #expect(await alice.resolver.counters().droppedReplayed == 1)
    #expect(await Self.bytesSent(to: victim.address, in: f.network) == 0)
    // A fresh query sealed by a key holder but sent from a forged source (its cookie is
    // Bob's, not the victim's): the cookie only.
    let sealer = PeerSealer(keys: PeerKeys(apiKey: "project-key"))
    let (_, body) = try sealer.open(query.bytes)
    let fresh = try sealer.seal(kind: .query, body: body, now: alice.now)
    // Bob's own first query was challenged already: the forgery adds one.
    let challengedBefore = await alice.resolver.counters().challenged
    await f.network.inject(fresh, from: victim.address, to: alice.address)
    await f.settle()
    let afterForgery = await alice.resolver.counters()
    #expect(afterForgery.challenged == challengedBefore + 1, "\(afterForgery)")
    #expect(await Self.bytesSent(to: victim.address, in: f.network) > 0)
    let toVictim = await Self.bytesSent(to: victim.address, in: f.network)
    #expect(toVictim <= fresh.count, "\(toVictim) bytes for a query of \(fresh.count)")
    #expect(answered > 3 * 1_200, "Bob's own answers carried the publications")
    await f.shutdown(alice, bob, carol)
  }

  @Test("a stale query gets nothing, not even an iHave")
  func aStaleQueryGetsNothing() async throws {
    let f = PeerFixture()
    let alice = try await f.node(name: "alice")
    let victim = await f.network.makeTransport(name: "victim")
    try await alice.publish("Alice")
    let sealer = PeerSealer(keys: PeerKeys(apiKey: "project-key"))
    let query = PeerMessage.query(
      PeerQuery(
        queryID: 9, token: try await alice.token(), mediums: .lan, sender: .random(),
        handles: PeerHandles()))
    // Captured 63 s ago (the battery's case) and relayed now.
    let stale = try sealer.seal(kind: .query, body: query.body, now: alice.now - 63)
    await f.network.inject(stale, from: victim.address, to: alice.address)
    await f.settle()
    #expect(await alice.resolver.counters().droppedStale == 1)
    await f.advance(1, alice)
    #expect(await Self.bytesSent(to: victim.address, in: f.network) == 0)
    #expect(await alice.resolver.shadowCount == 0)
    await f.shutdown(alice)
  }

  @Test("a flood from many ports of one host is rate-limited as one sender")
  func aFloodFromManyPortsIsLimitedByHost() async throws {
    let f = PeerFixture()
    let alice = try await f.node(name: "alice") {
      $0.ratePerHost = 50
      $0.burstPerHost = 100
    }
    try await alice.publish("Alice")
    let sealer = PeerSealer(keys: PeerKeys(apiKey: "project-key"))
    // 4 096 "ports" of host 0xee: a port each, one datagram each, every one valid; in
    // batches the transport's buffer (1 024) holds.
    for batch in 0..<8 {
      for port in (batch * 512)..<((batch + 1) * 512) {
        let from = PeerAddress(
          transport: MemoryPeerNetwork.kind,
          bytes: [0, 0, 0, 0xee, UInt8(port >> 8), UInt8(port & 0xff)])!
        let whoHas = PeerMessage.whoHas(queryID: UInt64(port + 1), token: Token(value: 5))
        let datagram = try sealer.seal(kind: .whoHas, body: whoHas.body, now: alice.now)
        await f.network.inject(datagram, from: from, to: alice.address)
      }
      await f.settle()
      #expect(await alice.resolver.counters().received == (batch + 1) * 512)
    }
    let counters = await alice.resolver.counters()
    #expect(counters.droppedRateLimited == 0, "each port sent one: \(counters)")
    #expect(counters.droppedHostRateLimited >= 4_096 - 100 - 10, "\(counters)")
    await f.shutdown(alice)
  }

  @Test("a device whose address was refused a query answers with the cookie, then the answer")
  func theCookieRoundTrip() async throws {
    let f = PeerFixture()
    // One token for the whole test (a new token is probed again).
    let alice = try await f.node(name: "alice", tokenLifetime: .seconds(900))
    let bob = try await f.node(name: "bob", tokenLifetime: .seconds(900))
    try await alice.publish("Alice")
    try await bob.subscribe()
    try await bob.hear(alice)
    #expect(await bob.answered())
    #expect(await bob.settled { $0.found == ["Alice"] })
    // The probe was challenged; the query with the cookie answered.
    #expect(await alice.resolver.counters().challenged == 1)
    #expect(await bob.resolver.counters().probes == 1)
    // Ten minutes on (two cookie periods): the refresh's cookie came with the last answer,
    // so it is still good; nothing is challenged again.
    for _ in 0..<150 {
      await f.advance(4, alice, bob)
      try await bob.hear(alice)
      #expect(await bob.answered())
    }
    let afterTenMinutes = await alice.resolver.counters()
    #expect(afterTenMinutes.challenged == 1, "\(afterTenMinutes)")
    #expect(bob.lost.isEmpty)
    await f.shutdown(alice, bob)
  }
}
