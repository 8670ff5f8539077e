@_spi(Resolver) import Core
import Foundation
import PeerResolution
import Strategy
import Testing
import Tokens

/// The hearer's side of the handles' digest, on plain instants: an unchanged digest from an
/// owner that hears us itself refreshes without a question; a changed one asks at once; an
/// owner that stops hearing us, a medium with no digest, or silence, all go back to questions.
@Suite("Peer exchange: refreshes by digest (on plain instants)")
struct PeerDigestStateMachineTests {
  let start = Date(timeIntervalSince1970: 1_800_000_000)
  let key = PeerExchangeStateMachine.Key(local: .random(), token: Token(value: 0x0a0b))
  let owner = Identifier.random()
  let lan = PeerAddress(transport: "memory", bytes: [1])!
  let unchanged = HandlesDigest(0x1111)!
  let changed = HandlesDigest(0x2222)!

  func at(_ seconds: Double) -> Date { start.addingTimeInterval(seconds) }

  /// A machine (refresh every 3 s) that has asked and been answered at 0.1 s, with the digest
  /// `unchanged` and an owner that hears this device on `hearsYou`.
  func answered(hearsYou: DiscoveryMediums = .lan) throws -> PeerExchangeStateMachine {
    var configuration = PeerExchangeStateMachine.Configuration()
    configuration.verifiedTransports = ["memory"]
    configuration.refreshInterval = .seconds(3)
    var machine = PeerExchangeStateMachine(configuration: configuration, seed: 3)
    let actions = machine.heard(key, on: .lan, returnPath: lan, digest: unchanged, at: at(0))
    let queryID = try #require(Self.questions(actions).first)
    #expect(
      machine.answered(
        queryID: queryID, sender: owner, from: lan, digest: unchanged, hearsYou: hearsYou,
        now: at(0.1)) != nil)
    return machine
  }

  @Test("the owner's digest unchanged, and it hears us: every refresh is local, none a question")
  func unchangedIsLocal() throws {
    var machine = try answered()
    var locals = 0
    // A minute of LAN sightings, one a second, with the same digest.
    for second in 1...60 {
      let actions =
        machine.heard(key, on: .lan, returnPath: lan, digest: unchanged, at: at(Double(second)))
        + machine.tick(now: at(Double(second) + 0.5))
      #expect(Self.questions(actions).isEmpty, "at \(second) s: \(actions)")
      locals += actions.filter { $0 == .refreshedLocally(key, owner: owner) }.count
    }
    // One local refresh per refresh interval (3 s).
    #expect((19...20).contains(locals), "\(locals)")
    #expect(machine.outstandingCount == 0)
  }

  @Test("a digest that differs from the answer's asks at once, not at the next refresh")
  func changedAsksAtOnce() throws {
    var machine = try answered()
    #expect(
      Self.questions(machine.heard(key, on: .lan, returnPath: lan, digest: unchanged, at: at(1)))
        .isEmpty)
    let asked = Self.questions(
      machine.heard(key, on: .lan, returnPath: lan, digest: changed, at: at(1.2)))
    #expect(asked.count == 1)
    // The new answer carries the new digest: local again from then on.
    let queryID = try #require(asked.first)
    #expect(
      machine.answered(
        queryID: queryID, sender: owner, from: lan, digest: changed, hearsYou: .lan, now: at(1.3))
        != nil)
    for second in 2...20 {
      let actions =
        machine.heard(key, on: .lan, returnPath: lan, digest: changed, at: at(Double(second)))
        + machine.tick(now: at(Double(second) + 0.5))
      #expect(Self.questions(actions).isEmpty, "at \(second) s: \(actions)")
    }
  }

  @Test("a stale digest that keeps being heard (replayed) asks once per query timeout, never more")
  func differingDigestIsBounded() throws {
    var machine = try answered()
    var questions = 0
    // Ten seconds of a stale digest heard every 100 ms; each question is answered at once
    // with the owner's real digest, which the stale one keeps contradicting.
    for tenth in 1...100 {
      let time = at(Double(tenth) / 10)
      let asked = Self.questions(
        machine.heard(key, on: .lan, returnPath: lan, digest: changed, at: time)
          + machine.tick(now: time))
      for queryID in asked {
        #expect(
          machine.answered(
            queryID: queryID, sender: owner, from: lan, digest: unchanged, hearsYou: .lan,
            now: time) != nil)
      }
      questions += asked.count
    }
    #expect((9...10).contains(questions), "\(questions) questions in 10 s")
  }

  @Test("the owner's old digest replayed around its new one does not hide the change")
  func replayedOldDigestDoesNotHideTheChange() throws {
    var machine = try answered()
    // The owner changed at 1.2 s: its announcements carry `changed`. A capture of one of its
    // earlier announcements (`unchanged`, what this device holds) is played just before and
    // just after the first new one.
    #expect(
      Self.questions(
        machine.heard(key, on: .lan, returnPath: lan, digest: unchanged, at: at(1.15))
      ).isEmpty)
    let asked = Self.questions(
      machine.heard(key, on: .lan, returnPath: lan, digest: changed, at: at(1.2)))
    #expect(asked.count == 1)
    let replay = machine.heard(key, on: .lan, returnPath: lan, digest: unchanged, at: at(1.25))
    #expect(!replay.contains(.refreshedLocally(key, owner: owner)), "\(replay)")
    #expect(machine.outstandingCount == 1)
    let queryID = try #require(asked.first)
    #expect(
      machine.answered(
        queryID: queryID, sender: owner, from: lan, digest: changed, hearsYou: .lan,
        now: at(1.3)) != nil)
    // The replayed old digest heard again later contradicts the answer: asked again (bounded,
    // see above), never refreshed locally on it.
    let later = machine.heard(key, on: .lan, returnPath: lan, digest: unchanged, at: at(2.7))
    #expect(!later.contains(.refreshedLocally(key, owner: owner)), "\(later)")
    #expect(Self.questions(later).count == 1)
  }

  @Test("an owner that does not hear us is refreshed by questions, digest or not")
  func ownerDeafIsAsked() throws {
    var machine = try answered(hearsYou: [])
    var questions = 0
    for second in 1...12 {
      let time = at(Double(second))
      let actions =
        machine.heard(key, on: .lan, returnPath: lan, digest: unchanged, at: time)
        + machine.tick(now: time.addingTimeInterval(0.5))
      #expect(!actions.contains(.refreshedLocally(key, owner: owner)))
      for queryID in Self.questions(actions) {
        questions += 1
        _ = machine.answered(
          queryID: queryID, sender: owner, from: lan, digest: unchanged, hearsYou: [],
          now: time.addingTimeInterval(0.1))
      }
    }
    #expect(questions >= 3, "\(questions)")
  }

  @Test("heard on a medium the owner does not hear us on: that refresh is a question")
  func anotherMediumIsAsked() throws {
    var machine = try answered(hearsYou: .lan)
    _ = machine.heard(key, on: .audio, returnPath: nil, at: at(1))
    let actions =
      machine.heard(key, on: .lan, returnPath: lan, digest: unchanged, at: at(3.2))
      + machine.tick(now: at(3.3))
    #expect(Self.questions(actions).count == 1, "\(actions)")
  }

  @Test("no digest heard (audio, BLE): refreshed by questions as ever")
  func noDigestIsAsked() throws {
    var machine = try answered(hearsYou: [.lan, .audio])
    // The first refresh uses the digest heard at 0 s; after it, only audio is heard.
    _ = machine.heard(key, on: .lan, returnPath: lan, digest: unchanged, at: at(1))
    #expect(
      machine.heard(key, on: .lan, returnPath: lan, at: at(3.2)) == [
        .refreshedLocally(key, owner: owner)
      ])
    let actions = machine.heard(key, on: .audio, returnPath: nil, at: at(6.5))
    #expect(Self.questions(actions).count == 1, "\(actions)")
  }

  @Test("the owner's update that it no longer hears us makes the next refresh a question, at once")
  func lapseAsksAtOnce() throws {
    var machine = try answered()
    _ = machine.heard(key, on: .lan, returnPath: lan, digest: unchanged, at: at(1))
    #expect(machine.tick(now: at(3.2)) == [.refreshedLocally(key, owner: owner)])
    _ = machine.heard(key, on: .lan, returnPath: lan, digest: unchanged, at: at(3.5))
    let actions = machine.updated(key, digest: unchanged, hearsYou: [], now: at(3.6))
    #expect(Self.questions(actions).count == 1, "\(actions)")
  }

  @Test("silence: no refresh of any kind, and the token is forgotten after forgetAfter")
  func silenceRefreshesNothing() throws {
    var machine = try answered()
    _ = machine.heard(key, on: .lan, returnPath: lan, digest: unchanged, at: at(1))
    #expect(machine.tick(now: at(3.2)) == [.refreshedLocally(key, owner: owner)])
    // Not heard after 1 s: nothing at all, then forgotten.
    for second in 4...40 { #expect(machine.tick(now: at(Double(second))).isEmpty) }
    #expect(machine.tick(now: at(41.5)) == [.forget(key, owner: owner)])
  }

  /// The query ids of the questions among `actions`.
  static func questions(_ actions: [PeerExchangeStateMachine.Action]) -> [UInt64] {
    actions.compactMap(\.questionID)
  }
}
