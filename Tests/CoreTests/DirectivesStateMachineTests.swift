import Strategy
import Testing
import Tokens

@_spi(Resolver) @testable import Core

/// The directives machine on values: which answers are followed, when the refresh timer is
/// armed, what a failed refresh waits, what each medium does. No clock, no resolver.
@Suite("DirectivesStateMachine")
struct DirectivesStateMachineTests {
  typealias Action = DirectivesStateMachine.Action
  let margin = DirectivesStateMachine.refreshMargin

  func directives(_ revision: UInt64, token: UInt64 = 1, expiresIn: Double = 60)
    -> Directives
  {
    Directives(
      revision: revision, token: Token(value: token), tokenExpiresIn: expiresIn,
      broadcast: .ble, scan: [.ble, .audio])
  }

  @Test("the first directives arm the refresh at the token's expiry and reconcile the mediums")
  func firstDirectives() {
    var machine = DirectivesStateMachine()
    #expect(machine.directives == nil)
    #expect(
      machine.answered(directives(1), isRefresh: false)
        == [.scheduleRefresh(after: .seconds(60) + margin, generation: 1), .reconcileMediums])
    #expect(machine.directives == directives(1))
  }

  @Test("an answer older than the directives followed changes nothing; an equal revision neither")
  func olderAnswersIgnored() {
    var machine = DirectivesStateMachine()
    _ = machine.answered(directives(5, token: 9), isRefresh: false)
    #expect(machine.answered(directives(4, token: 2), isRefresh: false).isEmpty)
    #expect(machine.answered(directives(5, token: 3), isRefresh: true).isEmpty)
    #expect(machine.directives?.token == Token(value: 9))
  }

  @Test("a newer answer with the same token keeps the armed timer; a new token re-arms it")
  func rearmOnlyWhenNeeded() {
    var machine = DirectivesStateMachine()
    _ = machine.answered(directives(1), isRefresh: false)
    #expect(machine.answered(directives(2), isRefresh: false) == [.reconcileMediums])
    #expect(
      machine.answered(directives(3, token: 2, expiresIn: 30), isRefresh: false)
        == [.scheduleRefresh(after: .seconds(30) + margin, generation: 2), .reconcileMediums])
    // The replaced timer does nothing when it fires; the current one refreshes once.
    #expect(machine.refreshDue(1) == false)
    #expect(machine.refreshDue(2) == true)
    #expect(machine.refreshDue(2) == false)
  }

  @Test("while a refresh runs no timer is armed: a report's newer answer arms one")
  func answerDuringRefresh() {
    var machine = DirectivesStateMachine()
    _ = machine.answered(directives(1), isRefresh: false)
    #expect(machine.refreshDue(1) == true)
    #expect(
      machine.answered(directives(2), isRefresh: false)
        == [.scheduleRefresh(after: .seconds(60) + margin, generation: 2), .reconcileMediums])
    // The refresh's own answer, newer still, re-arms (a refresh always does).
    #expect(
      machine.answered(directives(3), isRefresh: true)
        == [.scheduleRefresh(after: .seconds(60) + margin, generation: 3), .reconcileMediums])
  }

  @Test("failed refreshes wait doubling delays with jitter, up to a minute; an answer resets them")
  func backoff() {
    var machine = DirectivesStateMachine()
    _ = machine.answered(directives(1), isRefresh: false)
    var bounds: [ClosedRange<Duration>] = []
    var ceiling = Duration.seconds(1)
    for _ in 0..<9 {
      bounds.append((ceiling / 2 + margin)...(ceiling + margin))
      ceiling = min(ceiling * 2, .seconds(60))
    }
    var generation: UInt64 = 1
    for range in bounds {
      #expect(machine.refreshDue(generation) == true)
      guard case .scheduleRefresh(let delay, let next) = machine.refreshFailed() else {
        Issue.record("a failed refresh scheduled nothing")
        return
      }
      #expect(range.contains(delay), "\(delay) not in \(range)")
      #expect(next == generation + 1)
      generation = next
    }
    // Answered: the next failure waits a second again.
    #expect(machine.refreshDue(generation) == true)
    _ = machine.answered(directives(2), isRefresh: true)
    guard case .scheduleRefresh(let delay, _) = machine.refreshFailed() else {
      Issue.record("a failed refresh scheduled nothing")
      return
    }
    #expect(delay <= .seconds(1) + margin)
  }

  @Test("a medium transmits and scans only what the directives name and it can do")
  func mediumWants() {
    var machine = DirectivesStateMachine()
    let both: MediumCapabilities = [.broadcast, .scan]
    let seven = DirectivesStateMachine.Transmission(token: Token(value: 7))
    #expect(machine.want(kind: .ble, capabilities: both) == .init(transmission: nil, scan: false))
    _ = machine.answered(directives(1, token: 7), isRefresh: false)
    #expect(machine.want(kind: .ble, capabilities: both) == .init(transmission: seven, scan: true))
    #expect(machine.want(kind: .ble, capabilities: .scan) == .init(transmission: nil, scan: true))
    #expect(
      machine.want(kind: .ble, capabilities: .broadcast) == .init(transmission: seven, scan: false))
    // Audio: told to scan, not to broadcast.
    #expect(machine.want(kind: .audio, capabilities: both) == .init(transmission: nil, scan: true))
  }

  @Test(
    "the digest rides beside the token: new handles under the same token are a new transmission")
  func digestChangesTheTransmission() {
    var machine = DirectivesStateMachine()
    var first = directives(1, token: 7)
    first.digest = HandlesDigest(0xabc)
    _ = machine.answered(first, isRefresh: false)
    let before = machine.want(kind: .ble, capabilities: .broadcast).transmission
    #expect(before == .init(token: Token(value: 7), digest: HandlesDigest(0xabc)))
    var second = directives(2, token: 7)
    second.digest = HandlesDigest(0xdef)
    #expect(machine.answered(second, isRefresh: false).contains(.reconcileMediums))
    let after = machine.want(kind: .ble, capabilities: .broadcast).transmission
    #expect(after == .init(token: Token(value: 7), digest: HandlesDigest(0xdef)))
    #expect(after != before)
    #expect(HandlesDigest(0) == nil)
  }
}
