@_spi(Resolver) import Core
import Foundation
import PeerResolution
import Testing
import Tokens

/// The hearer's record of what each side holds, on plain instants: the owner's digest from its
/// newest answer or update (what a question names as held), the digest of this device's
/// handles the owner holds (what lets a question leave them out), and an owner that no longer
/// holds them making the question go again, once.
@Suite("Peer exchange: what each side holds (on plain instants)")
struct PeerConditionalStateMachineTests {
  let start = Date(timeIntervalSince1970: 1_800_000_000)
  let key = PeerExchangeStateMachine.Key(local: .random(), token: Token(value: 0x0c0d))
  let owner = Identifier.random()
  let address = PeerAddress(transport: "memory", bytes: [2])!
  let theirs = HandlesDigest(0x3333)!
  let mine = HandlesDigest(0x4444)!

  func at(_ seconds: Double) -> Date { start.addingTimeInterval(seconds) }

  func machine() -> PeerExchangeStateMachine {
    var configuration = PeerExchangeStateMachine.Configuration()
    configuration.verifiedTransports = ["memory"]
    return PeerExchangeStateMachine(configuration: configuration, seed: 5)
  }

  @Test("an answer records the owner's digest and what it holds of ours; an update replaces both")
  func answersAndUpdatesRecordWhatIsHeld() throws {
    var machine = machine()
    #expect(machine.answeredDigest(of: key) == nil && machine.ownerHolds(key) == nil)
    let asked = machine.heard(key, on: .ble, returnPath: address, at: at(0))
    let queryID = try #require(asked.compactMap(\.questionID).first)
    #expect(
      machine.answered(
        queryID: queryID, sender: owner, from: address, digest: theirs, holds: mine, now: at(0.1))
        != nil)
    #expect(machine.answeredDigest(of: key) == theirs)
    #expect(machine.ownerHolds(key) == mine)
    #expect(machine.confirmedAddress(of: key) == address)
    let newer = HandlesDigest(0x5555)!
    _ = machine.updated(key, digest: newer, hearsYou: [], holds: nil, now: at(1))
    #expect(machine.answeredDigest(of: key) == newer)
    #expect(machine.ownerHolds(key) == nil)
  }

  @Test("an owner that does not hold what the question left out: asked again at once, only once")
  func handlesWantedAsksAgainOnce() throws {
    var machine = machine()
    let first = machine.heard(key, on: .ble, returnPath: address, at: at(0))
    let firstID = try #require(first.compactMap(\.questionID).first)
    _ = machine.answered(
      queryID: firstID, sender: owner, from: address, digest: theirs, holds: mine, now: at(0.1))
    // The refresh, 3 s later and heard meanwhile.
    let refresh =
      machine.heard(key, on: .ble, returnPath: address, at: at(3))
      + machine.tick(now: at(3.2))
    let refreshID = try #require(refresh.compactMap(\.questionID).first)
    // From another address: nothing.
    let elsewhere = PeerAddress(transport: "memory", bytes: [9])!
    #expect(machine.handlesWanted(queryID: refreshID, from: elsewhere, now: at(3.3)).isEmpty)
    #expect(machine.ownerHolds(key) == nil, "whoever says so, they go with the next question")
    let again = machine.handlesWanted(queryID: refreshID, from: address, now: at(3.3))
    #expect(again == [.sendQuery(queryID: refreshID, key: key, mediums: .ble, to: address)])
    // Said twice, the question does not go a third time; its deadline retries it.
    #expect(machine.handlesWanted(queryID: refreshID, from: address, now: at(3.4)).isEmpty)
    #expect(machine.outstandingCount == 1)
    // An unknown id: nothing.
    #expect(machine.handlesWanted(queryID: 12345, from: address, now: at(3.4)).isEmpty)
  }
}
