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

  /// A machine whose test addresses ("memory") cannot be forged, so a way back is queried at
  /// once, unless `probing`: then it is probed first, as a LAN announcement's is.
  func machine(
    probing: Bool = false,
    _ change: (inout PeerExchangeStateMachine.Configuration) -> Void = { _ in }
  )
    -> PeerExchangeStateMachine
  {
    var configuration = PeerExchangeStateMachine.Configuration()
    if !probing { configuration.verifiedTransports = ["memory"] }
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
    // A second iHave for the query (its owner refusing the cookie it carried) sends it once
    // more; a third, or one from another address, changes nothing.
    #expect(
      m.ownerFound(queryID: queryID, at: lan, now: at(0.3))
        == [.sendQuery(queryID: queryID, key: key, mediums: .audio, to: lan)])
    #expect(m.ownerFound(queryID: queryID, at: lan, now: at(0.4)).isEmpty)
    #expect(m.outstandingCount == 1)
  }

  /// Issue 39: a LAN announcement's way back is unauthenticated when the medium has no key;
  /// a query there carried the hearer's publications to whatever address it named.
  @Test("a way back not vouched for gets a probe (a who-has there), then the query")
  func aWayBackIsProbedFirst() throws {
    var m = machine(probing: true)
    let actions = m.heard(key, on: .lan, returnPath: lan, at: at(0))
    guard case .probe(let queryID, key, lan) = try #require(actions.first) else {
      Issue.record("expected a probe of \(lan), got \(actions)")
      return
    }
    #expect(
      m.ownerFound(queryID: queryID, at: lan, now: at(0.1))
        == [.sendQuery(queryID: queryID, key: key, mediums: .lan, to: lan)])
    #expect(m.answered(queryID: queryID, sender: owner, from: lan, now: at(0.2)) != nil)
    // Answered: refreshes are queries to that address, no probe.
    let refresh = m.heard(key, on: .lan, returnPath: lan, at: at(3.5))
    #expect(refresh.contains { if case .sendQuery(_, _, _, lan) = $0 { true } else { false } })
  }

  /// Issue 39: a keyless forger announcing a real owner's token with its own address kept a
  /// listening newcomer from ever finding (its questions all went to the forger).
  @Test("a probe unanswered: everyone is asked at once, and that address is never probed again")
  func aFailedProbeFallsBackToEveryone() throws {
    var m = machine(probing: true)
    let forged = PeerAddress(transport: "memory", bytes: [0x66])!
    let first = m.heard(key, on: .lan, returnPath: forged, at: at(0))
    #expect(
      first.count == 1 && { if case .probe(_, _, forged) = first[0] { true } else { false } }())
    // The forger keeps announcing: nothing more while the probe waits.
    #expect(m.heard(key, on: .lan, returnPath: forged, at: at(0.5)).isEmpty)
    let fallback = m.tick(now: at(1))
    guard case .sendWhoHas(let whoHas, key) = try #require(fallback.first), fallback.count == 1
    else {
      Issue.record("expected a who-has to everyone, got \(fallback)")
      return
    }
    #expect(m.heard(key, on: .lan, returnPath: forged, at: at(1.1)).isEmpty)
    #expect(
      m.ownerFound(queryID: whoHas, at: lan, now: at(1.2))
        == [.sendQuery(queryID: whoHas, key: key, mediums: .lan, to: lan)])
    #expect(m.answered(queryID: whoHas, sender: owner, from: lan, now: at(1.3)) != nil)
    // The owner stops answering there: the forged address is still never probed again.
    _ = m.heard(key, on: .lan, returnPath: forged, at: at(4.5))
    var later: [PeerExchangeStateMachine.Action] = []
    for step in 0..<60 {
      later += m.tick(now: at(4.5 + Double(step) * 0.5))
      later += m.heard(key, on: .lan, returnPath: forged, at: at(4.6 + Double(step) * 0.5))
    }
    #expect(!later.contains { if case .probe(_, _, forged) = $0 { true } else { false } })
    #expect(!later.contains { if case .sendQuery(_, _, _, forged) = $0 { true } else { false } })
    #expect(later.contains { if case .sendWhoHas = $0 { true } else { false } })
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

  @Test("new handles are asked of every owner followed but those informed otherwise")
  func handlesChangedSkipsInformedOwners() throws {
    var m = machine()
    let other = Token(value: 0x0908_0706_0504_0302)
    let otherOwner = Identifier.random()
    let otherKey = PeerExchangeStateMachine.Key(local: local, token: other)
    var queries: [UInt64: PeerExchangeStateMachine.Key] = [:]
    for action in m.heard(key, on: .lan, returnPath: lan, at: at(0))
      + m.heard(otherKey, on: .lan, returnPath: lan, at: at(0))
    {
      if case .sendQuery(let id, let asked, _, _) = action { queries[id] = asked }
    }
    #expect(queries.count == 2)
    for (id, asked) in queries {
      _ = m.answered(
        queryID: id, sender: asked == key ? owner : otherOwner, from: lan, now: at(0.1))
    }
    // The owner of `token` asked us lately (it gets our publications unasked): only the other
    // owner is asked again.
    let actions = m.handlesChanged(local: local, now: at(1), informed: [owner])
    #expect(actions.count == 1)
    if case .sendQuery(_, let asked, _, _) = try #require(actions.first) {
      #expect(asked == otherKey)
    }
    // Without it, both.
    var n = machine()
    for action in n.heard(key, on: .lan, returnPath: lan, at: at(0)) {
      if case .sendQuery(let id, _, _, _) = action {
        _ = n.answered(queryID: id, sender: owner, from: lan, now: at(0.1))
      }
    }
    #expect(n.handlesChanged(local: local, now: at(1)).count == 1)
  }

  @Test("a late answer to an earlier attempt answers the question; after it, none does")
  func lateAnswerToAnEarlierAttempt() throws {
    func queryID(_ actions: [PeerExchangeStateMachine.Action]) -> UInt64? {
      guard case .sendQuery(let id, _, _, _)? = actions.first else { return nil }
      return id
    }
    var m = machine { $0.maximumAttempts = 3 }
    let first = try #require(queryID(m.heard(key, on: .ble, returnPath: lan, at: at(0))))
    let second = try #require(queryID(m.tick(now: at(1))))
    #expect(first != second)
    #expect(m.outstandingCount == 1)
    // The answer to the first attempt arrives while the second waits: answered.
    let late = m.answered(queryID: first, sender: owner, from: lan, now: at(1.5))
    #expect(late != nil)
    #expect(m.outstandingCount == 0)
    // The second attempt's answer, arriving later, answers nothing more.
    let again = m.answered(queryID: second, sender: owner, from: lan, now: at(1.6))
    let replayed = m.answered(queryID: first, sender: owner, from: lan, now: at(1.7))
    #expect(again == nil && replayed == nil)
    // Given up after the last attempt: a late answer to any attempt of the round still
    // answers (its id was ours, drawn at random); once answered, no other does.
    var n = machine { $0.maximumAttempts = 2 }
    let early = try #require(queryID(n.heard(key, on: .ble, returnPath: lan, at: at(0))))
    let later = try #require(queryID(n.tick(now: at(1))))
    _ = n.tick(now: at(3))
    #expect(n.outstandingCount == 0)
    let afterGivingUp = n.answered(queryID: early, sender: owner, from: lan, now: at(3.5))
    #expect(afterGivingUp != nil)
    let another = n.answered(queryID: later, sender: owner, from: lan, now: at(3.6))
    #expect(another == nil)
    // A random id never asked answers nothing.
    let unknown = n.answered(queryID: 0xDEAD, sender: owner, from: lan, now: at(3.7))
    #expect(unknown == nil)
  }

  @Test("fragments of an answer arriving from the asked address put the next ask off")
  func progressPutsTheRetryOff() {
    var m = machine { $0.maximumAttempts = 3 }
    let other = PeerAddress(transport: "memory", bytes: [2])!
    #expect(m.heard(key, on: .ble, returnPath: lan, at: at(0)).count == 1)
    // A fragment from elsewhere changes nothing: asked again at 1 s.
    m.progress(from: other, now: at(0.8))
    // Fragments from the owner's address: the deadline moves to 1 s after the last one.
    m.progress(from: lan, now: at(0.9))
    #expect(m.tick(now: at(1)).isEmpty)
    m.progress(from: lan, now: at(1.5))
    #expect(m.tick(now: at(2.4)).isEmpty)
    #expect(m.outstandingCount == 1)
    // The rest stopped arriving: asked again a query timeout after the last fragment.
    #expect(m.tick(now: at(2.5)).count == 1)
  }

  @Test("a first question over a connection waits for the link to open too, once")
  func connectionAllowanceOnFirstContact() throws {
    var m = machine { $0.connectionAllowance = .seconds(2) }
    let first = try #require(firstQueryID(m.heard(key, on: .ble, returnPath: lan, at: at(0))))
    // Not asked again at the query timeout (1 s): the link may still be opening.
    #expect(m.tick(now: at(2.9)).isEmpty)
    #expect(m.tick(now: at(3)).count == 1)
    // Answered (by the first attempt, late): the address is confirmed, and a question to it
    // waits the query timeout alone.
    #expect(m.answered(queryID: first, sender: owner, from: lan, now: at(3.1)) != nil)
    _ = m.handlesChanged(local: local, now: at(4))
    #expect(m.outstandingCount == 1)
    #expect(m.tick(now: at(5)).count == 1)
  }

  @Test("parts of a datagram put the next ask off, but no later than the reassembler's wait")
  func partsPutTheRetryOffWithinABound() {
    var m = machine { $0.maximumAttempts = 3 }
    #expect(m.heard(key, on: .ble, returnPath: lan, at: at(0)).count == 1)
    // A chunk every 0.5 s, as a slow GATT read gives them: no second ask while they come.
    var time = 0.5
    while time < PeerLimits.reassemblyTimeout {
      m.partArrived(from: lan, now: at(time))
      #expect(m.tick(now: at(time + 0.4)).isEmpty)
      time += 0.5
    }
    // Chunks that never make a datagram (anyone at the address can send them) hold the
    // question no longer than the reassembler keeps an unfinished message.
    let bound = PeerLimits.reassemblyTimeout
    m.partArrived(from: lan, now: at(bound - 0.1))
    m.partArrived(from: lan, now: at(bound))
    #expect(m.tick(now: at(bound + 0.01)).count == 1)
    // The bound is the question's, all attempts together: the second attempt (2 s) is not
    // held past its own timeout by more parts.
    m.partArrived(from: lan, now: at(bound + 1.5))
    #expect(m.tick(now: at(bound + 2.02)).count == 1)
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

  @Test("bounds: a new token past maximumTracked takes the place of one never answered")
  func bounds() {
    var m = machine {
      $0.maximumTracked = 3
      $0.maximumOutstanding = 2
    }
    var asked = 0
    for value in 1...5 {
      let key = PeerExchangeStateMachine.Key(local: local, token: Token(value: UInt64(value)))
      asked += m.heard(key, on: .lan, returnPath: lan, at: at(0)).filter(\.isQuestion).count
    }
    // 1 and 2 asked, 3 waits its turn; 4 and 5 each take the place of the oldest unanswered.
    #expect(asked == 4)
    #expect(m.trackedCount == 3 && m.evictedTokens == 2 && m.refusedTokens == 0)
    #expect(m.outstandingCount == 2 && m.deferredQuestions == 1)
    #expect(m.tick(now: at(1)).count == 2)  // 4 and 5 asked again (slots taken again)
  }

  @Test("answered tokens are kept when new tokens crowd in; refused only when all are answered")
  func evictionKeepsAnswered() throws {
    var m = machine { $0.maximumTracked = 2 }
    let a = PeerExchangeStateMachine.Key(local: local, token: Token(value: 1))
    let queryID = try #require(firstQueryID(m.heard(a, on: .lan, returnPath: lan, at: at(0))))
    #expect(m.answered(queryID: queryID, sender: owner, from: lan, now: at(0.1)) != nil)
    var lastQuestion: UInt64?
    for value in 2...40 {
      let noise = PeerExchangeStateMachine.Key(local: local, token: Token(value: UInt64(value)))
      lastQuestion = firstQueryID(
        m.heard(noise, on: .lan, returnPath: lan, at: at(Double(value) / 100)))
    }
    #expect(m.trackedCount == 2 && m.owner(of: a) == owner && m.evictedTokens == 38)
    // The last of them answered too: every token followed was answered, a new one is refused.
    let last = try #require(lastQuestion)
    #expect(m.answered(queryID: last, sender: .random(), from: lan, now: at(1)) != nil)
    let late = PeerExchangeStateMachine.Key(local: local, token: Token(value: 99))
    #expect(m.heard(late, on: .ble, returnPath: nil, at: at(2)).isEmpty)
    #expect(m.refusedTokens == 1 && m.trackedCount == 2)
  }

  @Test("an emitter cycling random tokens does not keep a real owner's new token from being asked")
  func floodOfTokens() {
    var m = machine()
    for value in 1...600 {
      let noise = PeerExchangeStateMachine.Key(local: local, token: Token(value: UInt64(value)))
      _ = m.heard(noise, on: .ble, returnPath: nil, at: at(Double(value) / 1000))
      _ = m.tick(now: at(Double(value) / 1000))
    }
    #expect(m.trackedCount == 256)
    // Who-has are bounded by their rate and their share of the outstanding questions.
    #expect(m.outstandingCount <= 16)
    let real = PeerExchangeStateMachine.Key(local: local, token: Token(value: 10_000))
    let actions = m.heard(real, on: .lan, returnPath: lan, at: at(1))
    #expect(actions.contains { if case .sendQuery(_, real, _, lan) = $0 { true } else { false } })
  }

  @Test("who-has go out at most at whoHasPerSecond, resolver-wide; the rest wait their turn")
  func whoHasRate() {
    var m = machine {
      $0.whoHasPerSecond = 1
      $0.whoHasBurst = 2
      $0.queryTimeout = .seconds(30)
    }
    var whoHas = 0
    for value in 1...4 {
      let key = PeerExchangeStateMachine.Key(local: local, token: Token(value: UInt64(value)))
      whoHas += m.heard(key, on: .audio, returnPath: nil, at: at(0)).filter(\.isQuestion).count
    }
    #expect(whoHas == 2)
    #expect(m.tick(now: at(0.5)).filter(\.isQuestion).isEmpty)
    #expect(m.tick(now: at(1)).filter(\.isQuestion).count == 1)
    #expect(m.tick(now: at(2)).filter(\.isQuestion).count == 1)
    #expect(m.outstandingCount == 4)
  }

  /// Issue 42: 200 devices on one segment, each sending 4 who-has a second to all, flooded it
  /// (160 000 receptions a second); questions then timed out, and fell back to more who-has.
  @Test("the segment's who-has rate is shared with the devices heard sending them")
  func whoHasShare() {
    var m = machine { $0.queryTimeout = .seconds(60) }
    #expect(m.whoHasRate(now: at(0)) == 4)
    let others = (0..<199).map { PeerAddress(transport: "memory", bytes: [2, UInt8($0)])! }
    for address in others.prefix(15) { m.heardWhoHas(from: address, now: at(0)) }
    #expect(m.whoHasRate(now: at(0)) == 1)  // 16 a second shared by 16
    for address in others { m.heardWhoHas(from: address, now: at(0)) }
    // 16 / 200 is under the floor.
    #expect(m.whoHasRate(now: at(0)) == 0.2)
    // Sent at that rate, with a burst of one.
    var sent = 0
    for value in 1...20 {
      let key = PeerExchangeStateMachine.Key(local: local, token: Token(value: UInt64(value)))
      sent += m.heard(key, on: .audio, returnPath: nil, at: at(0)).filter(\.isQuestion).count
    }
    #expect(sent == 1)
    for step in 1...9 {
      sent += m.tick(now: at(Double(step))).filter(\.isQuestion).count
    }
    #expect(sent == 2)  // one more after 5 s
    // The others fall quiet: the whole rate is this device's again.
    #expect(m.whoHasRate(now: at(10)) == 4)
    // A key holder sending from a thousand addresses leaves every device the floor.
    for index in 0..<1_000 {
      m.heardWhoHas(
        from: PeerAddress(
          transport: "memory", bytes: [3, UInt8(index / 256), UInt8(index % 256)])!,
        now: at(20))
    }
    #expect(m.whoHasRate(now: at(20)) == 0.2)
  }

  @Test("a probe's iHave after its timeout answers the who-has that replaced it")
  func lateProbeAnswer() throws {
    var m = machine(probing: true)
    guard
      case .probe(let probe, key, lan) = try #require(
        m.heard(key, on: .lan, returnPath: lan, at: at(0)).first)
    else {
      Issue.record("expected a probe")
      return
    }
    guard case .sendWhoHas(let whoHas, key) = try #require(m.tick(now: at(1)).first) else {
      Issue.record("expected a who-has once the probe timed out")
      return
    }
    // The crowded segment delivers the probe's iHave late: the owner is there after all. The
    // query goes under the probe's id.
    #expect(
      m.ownerFound(queryID: probe, at: lan, now: at(1.2))
        == [.sendQuery(queryID: probe, key: key, mediums: .lan, to: lan)])
    // The who-has's own iHave follows: the owner is found already, nothing goes again.
    #expect(m.ownerFound(queryID: whoHas, at: lan, now: at(1.25)).isEmpty)
    #expect(m.answered(queryID: probe, sender: owner, from: lan, now: at(1.3)) != nil)
    // Once answered, a late iHave changes nothing.
    #expect(m.ownerFound(queryID: probe, at: lan, now: at(1.4)).isEmpty)
    #expect(m.outstandingCount == 0)
  }

  /// A machine whose probe of `key` at `lan` timed out at 1 s while the who-has that would
  /// follow waits (another token spent the who-has budget), and that probe's id.
  func timedOutProbeWaitingForWhoHas() throws -> (PeerExchangeStateMachine, UInt64) {
    var m = machine(probing: true) {
      $0.whoHasBurst = 1
      $0.whoHasPerSecond = 0.01
    }
    let other = PeerExchangeStateMachine.Key(local: local, token: Token(value: 99))
    #expect(m.heard(other, on: .audio, returnPath: nil, at: at(0)).filter(\.isQuestion).count == 1)
    let first = try #require(m.heard(key, on: .lan, returnPath: lan, at: at(0)).first)
    guard case .probe(let probe, key, lan) = first else {
      Issue.record("expected a probe, got \(first)")
      throw CancellationError()
    }
    #expect(m.tick(now: at(1)).filter(\.isQuestion).isEmpty)
    return (m, probe)
  }

  @Test(
    "a probe's iHave long after its timeout is ignored (it may have been held back and relayed)")
  func lateProbeAnswerWindow() throws {
    var (m, probe) = try timedOutProbeWaitingForWhoHas()
    // The wire's freshness window (30 s) after the probe was given up, and a little more.
    let relayed = PeerAddress(transport: "memory", bytes: [0x77])!
    #expect(m.ownerFound(queryID: probe, at: relayed, now: at(31.1)).isEmpty)
    #expect(m.outstandingCount == 0)  // nothing brought back
  }

  @Test("a probe's iHave after its timeout brings back the who-has waiting for its turn")
  func lateProbeAnswerRevives() throws {
    var (m, probe) = try timedOutProbeWaitingForWhoHas()
    #expect(
      m.ownerFound(queryID: probe, at: lan, now: at(1.5))
        == [.sendQuery(queryID: probe, key: key, mediums: .lan, to: lan)])
    #expect(m.answered(queryID: probe, sender: owner, from: lan, now: at(1.6)) != nil)
  }

  @Test("a token never answered rests twice as long after each failed round, up to maximumRest")
  func exponentialRest() {
    var m = machine {
      $0.maximumAttempts = 1
      $0.restAfterFailure = .seconds(5)
      $0.maximumRest = .seconds(15)
      $0.forgetAfter = .seconds(100)
    }
    #expect(m.heard(key, on: .audio, returnPath: nil, at: at(0)).count == 1)
    #expect(m.tick(now: at(1)).isEmpty)  // given up: rest 5 s
    #expect(m.heard(key, on: .audio, returnPath: nil, at: at(5.9)).isEmpty)
    #expect(m.heard(key, on: .audio, returnPath: nil, at: at(6)).count == 1)
    #expect(m.tick(now: at(7)).isEmpty)  // rest 10 s
    #expect(m.heard(key, on: .audio, returnPath: nil, at: at(16.9)).isEmpty)
    #expect(m.heard(key, on: .audio, returnPath: nil, at: at(17)).count == 1)
    #expect(m.tick(now: at(18)).isEmpty)  // rest 20 s, capped at 15 s
    #expect(m.heard(key, on: .audio, returnPath: nil, at: at(32.9)).isEmpty)
    #expect(m.heard(key, on: .audio, returnPath: nil, at: at(33)).count == 1)
  }

  @Test("an answered owner's address is kept against a forged way back until it stops answering")
  func answeredAddressKept() throws {
    var m = machine {
      $0.refreshInterval = .seconds(3)
      $0.restAfterFailure = .seconds(5)
    }
    let forged = PeerAddress(transport: "memory", bytes: [0x66])!
    let queryID = try #require(firstQueryID(m.heard(key, on: .lan, returnPath: lan, at: at(0))))
    #expect(m.answered(queryID: queryID, sender: owner, from: lan, now: at(0.1)) != nil)
    // A sighting with another way back (a forged announcement): the refresh still goes to
    // the address the owner answered from.
    let refresh = m.heard(key, on: .lan, returnPath: forged, at: at(3.5))
    #expect(refresh.contains { if case .sendQuery(_, _, _, lan) = $0 { true } else { false } })
    #expect(
      m.tick(now: at(4.5)).contains {
        if case .sendQuery(_, _, _, lan) = $0 { true } else { false }
      })
    #expect(m.tick(now: at(6.5)).count == 1)
    #expect(m.tick(now: at(10.5)).isEmpty)  // given up on it: rest 5 s
    // Only now is the newer way back tried.
    let next = m.heard(key, on: .lan, returnPath: forged, at: at(15.5))
    #expect(next.contains { if case .sendQuery(_, _, _, forged) = $0 { true } else { false } })
  }
}

extension PeerExchangeStateMachine.Action {
  /// The query id of a question (a who-has, a probe or a query); nil for a forget or a local
  /// refresh.
  var questionID: UInt64? {
    switch self {
    case .sendQuery(let id, _, _, _), .sendWhoHas(let id, _), .probe(let id, _, _): id
    case .forget, .refreshedLocally: nil
    }
  }

  /// A who-has, a probe or a query (not a forget or a local refresh).
  var isQuestion: Bool { questionID != nil }
}

/// The query id of the first question among `actions`.
func firstQueryID(_ actions: [PeerExchangeStateMachine.Action]) -> UInt64? {
  actions.lazy.compactMap(\.questionID).first
}
