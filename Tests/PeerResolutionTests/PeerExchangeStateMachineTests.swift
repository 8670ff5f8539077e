@_spi(Resolver) import Core
import Foundation
import PeerResolution
import Strategy
import Testing
import Tokens

@Suite("Peer exchange state machine (on plain instants)")
struct PeerExchangeStateMachineTests {
  let start = Date(timeIntervalSince1970: 1_800_000_000)
  let local = DeviceID.random()
  let token = Token(value: 0x0102_0304_0506_0708)
  let owner = Identifier.random()
  let lan = PeerAddress(transport: "memory", bytes: [1])!

  var key: PeerExchangeStateMachine.Key { .init(local: local, token: token) }

  func machine(_ change: (inout PeerExchangeStateMachine.Configuration) -> Void = { _ in })
    -> PeerExchangeStateMachine
  {
    var configuration = PeerExchangeStateMachine.Configuration()
    change(&configuration)
    return PeerExchangeStateMachine(configuration: configuration, seed: 7)
  }

  func at(_ seconds: Double) -> Date { start.addingTimeInterval(seconds) }

  @Test("a token heard with a way back is asked of its sender directly, once")
  func directQuery() throws {
    var m = machine()
    let actions = m.heard(key, on: .lan, returnPath: lan, at: at(0))
    guard case .sendQuery(_, let asked, let mediums, let address) = try #require(actions.first)
    else {
      Issue.record("expected a query, got \(actions)")
      return
    }
    #expect(asked == key && mediums == .lan && address == lan)
    // Heard again while the question is out: nothing more.
    #expect(m.heard(key, on: .lan, returnPath: lan, at: at(0.1)).isEmpty)
    #expect(m.outstandingCount == 1)
  }

  @Test("a token heard with no way back gets a who-has; the owner's iHave turns it into a query")
  func whoHasThenQuery() throws {
    var m = machine()
    let actions = m.heard(key, on: .audio, returnPath: nil, at: at(0))
    guard case .sendWhoHas(let queryID, let asked) = try #require(actions.first) else {
      Issue.record("expected a who-has, got \(actions)")
      return
    }
    #expect(asked == key)
    #expect(
      m.ownerFound(queryID: queryID, at: lan, now: at(0.2))
        == [.sendQuery(queryID: queryID, key: key, mediums: .audio, to: lan)])
    // A second iHave (another device claiming the token) changes nothing.
    #expect(m.ownerFound(queryID: queryID, at: lan, now: at(0.3)).isEmpty)
  }

  @Test("with no transport that reaches everyone and no way back, nothing is asked")
  func nowhereToAsk() {
    var m = machine { $0.canAskEveryone = false }
    #expect(m.heard(key, on: .audio, returnPath: nil, at: at(0)).isEmpty)
    #expect(m.outstandingCount == 0)
    // A later sighting with a way back is asked once the rest is over.
    #expect(m.heard(key, on: .lan, returnPath: lan, at: at(1)).isEmpty)
    #expect(m.heard(key, on: .lan, returnPath: lan, at: at(6)).count == 1)
  }

  @Test("unanswered questions are asked again with a doubling wait, then rest")
  func retryWithBackoff() {
    var m = machine { $0.maximumAttempts = 3 }
    #expect(m.heard(key, on: .lan, returnPath: lan, at: at(0)).count == 1)
    #expect(m.tick(now: at(0.9)).isEmpty)
    #expect(m.tick(now: at(1)).count == 1)  // attempt 2, waits 2 s
    #expect(m.tick(now: at(2.9)).isEmpty)
    #expect(m.tick(now: at(3)).count == 1)  // attempt 3, waits 4 s
    #expect(m.tick(now: at(6.9)).isEmpty)
    #expect(m.tick(now: at(7)).isEmpty)  // given up: rest 5 s
    #expect(m.outstandingCount == 0)
    #expect(m.heard(key, on: .lan, returnPath: lan, at: at(8)).isEmpty)
    #expect(m.heard(key, on: .lan, returnPath: lan, at: at(12)).count == 1)
  }

  @Test("an answer resolves the question and returns when the token was heard on each medium")
  func answered() throws {
    var m = machine()
    let queryID = try #require(firstQueryID(m.heard(key, on: .lan, returnPath: lan, at: at(0))))
    _ = m.heard(key, on: .ble, returnPath: nil, at: at(0.5))
    let answer = m.answered(queryID: queryID, sender: owner, from: lan, now: at(0.6))
    let resolution = try #require(answer)
    #expect(resolution.key == key)
    #expect(resolution.heard == [.lan: at(0), .ble: at(0.5)])
    #expect(m.owner(of: key) == owner)
    // The same answer again, or an answer to a question never asked: nil.
    let again = m.answered(queryID: queryID, sender: owner, from: lan, now: at(0.7))
    let unasked = m.answered(queryID: 42, sender: owner, from: lan, now: at(0.7))
    #expect(again == nil && unasked == nil)
  }

  @Test("refresh: asked again after the interval while the token is heard, not when it is not")
  func refresh() throws {
    var m = machine { $0.refreshInterval = .seconds(3) }
    let first = try #require(firstQueryID(m.heard(key, on: .lan, returnPath: lan, at: at(0))))
    let firstAnswer = m.answered(queryID: first, sender: owner, from: lan, now: at(0.1))
    #expect(firstAnswer != nil)
    #expect(m.heard(key, on: .lan, returnPath: lan, at: at(1)).isEmpty)
    let second = try #require(firstQueryID(m.heard(key, on: .lan, returnPath: lan, at: at(3.2))))
    let secondAnswer = m.answered(queryID: second, sender: owner, from: lan, now: at(3.3))
    #expect(secondAnswer != nil)
    // Not heard since that question: the interval passes with no question.
    #expect(m.tick(now: at(7)).isEmpty)
    #expect(m.tick(now: at(20)).isEmpty)
  }

  @Test("a change of the local handles asks every resolved owner at once")
  func handlesChanged() throws {
    var m = machine()
    let queryID = try #require(firstQueryID(m.heard(key, on: .ble, returnPath: lan, at: at(0))))
    _ = m.answered(queryID: queryID, sender: owner, from: lan, now: at(0.1))
    let actions = m.handlesChanged(local: local, now: at(0.5))
    guard case .sendQuery(_, let asked, let mediums, let address) = try #require(actions.first)
    else { return }
    // Nothing heard since the answer: the question carries the handles, and no medium.
    #expect(asked == key && mediums == [] && address == lan)
    #expect(m.handlesChanged(local: DeviceID.random(), now: at(0.5)).isEmpty)
  }

  @Test("a token not heard for forgetAfter is forgotten")
  func forget() {
    var m = machine { $0.forgetAfter = .seconds(40) }
    _ = m.heard(key, on: .lan, returnPath: lan, at: at(0))
    _ = m.tick(now: at(39))
    #expect(m.trackedCount == 1)
    let actions = m.tick(now: at(40))
    #expect(actions.contains(.forget(key, owner: nil)))
    #expect(m.trackedCount == 0 && m.outstandingCount == 0)
  }

  @Test("bounds: tokens past maximumTracked are refused; questions past maximumOutstanding wait")
  func bounds() {
    var m = machine {
      $0.maximumTracked = 3
      $0.maximumOutstanding = 2
    }
    var asked = 0
    for value in 1...5 {
      let key = PeerExchangeStateMachine.Key(local: local, token: Token(value: UInt64(value)))
      asked += m.heard(key, on: .lan, returnPath: lan, at: at(0)).count
    }
    #expect(asked == 2)
    #expect(m.trackedCount == 3 && m.refusedTokens == 2 && m.outstandingCount == 2)
    // When the first two time out and rest, the third gets its turn.
    #expect(m.tick(now: at(1)).count == 2)  // the first two asked again (slots taken again)
  }
}

/// The query id of the first question among `actions`.
private func firstQueryID(_ actions: [PeerExchangeStateMachine.Action]) -> UInt64? {
  for action in actions {
    switch action {
    case .sendQuery(let id, _, _, _), .sendWhoHas(let id, _): return id
    case .forget: continue
    }
  }
  return nil
}
