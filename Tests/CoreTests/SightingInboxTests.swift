import Testing
import Tokens

@testable import Core

/// The sighting inbox's batching decisions, on values: when a flush must start, what a take
/// returns, what is dropped past the capacity.
@Suite("SightingInbox")
struct SightingInboxTests {
  func sighting(_ n: UInt64) -> Sighting { Sighting(token: Token(value: n), medium: .ble) }

  @Test("only the append that finds the inbox idle starts a flush; an empty take ends it")
  func oneFlushPerBurst() {
    let inbox = SightingInbox(capacity: 100)
    #expect(inbox.append(sighting(1)) == true)
    #expect(inbox.append(sighting(2)) == false)
    #expect(inbox.append(sighting(3)) == false)
    let first = inbox.take(upTo: 10)
    #expect(first.batch.map(\.token) == [Token(value: 1), Token(value: 2), Token(value: 3)])
    // The flush still runs until it finds the inbox empty: an append meanwhile starts none.
    #expect(inbox.append(sighting(4)) == false)
    #expect(inbox.take(upTo: 10).batch.map(\.token) == [Token(value: 4)])
    #expect(inbox.take(upTo: 10).batch.isEmpty)
    // Ended: the next append starts a flush again.
    #expect(inbox.append(sighting(5)) == true)
  }

  @Test("a take returns at most its limit, oldest first; the rest wait for the next")
  func batchLimit() {
    let inbox = SightingInbox(capacity: 100)
    for n in 1...25 { _ = inbox.append(sighting(UInt64(n))) }
    #expect(inbox.take(upTo: 10).batch.map(\.token.value) == Array(1...10).map(UInt64.init))
    #expect(inbox.take(upTo: 10).batch.count == 10)
    #expect(inbox.take(upTo: 10).batch.map(\.token.value) == Array(21...25).map(UInt64.init))
  }

  @Test("past the capacity the oldest are dropped, and the next take says how many, once")
  func capacity() {
    let inbox = SightingInbox(capacity: 3)
    for n in 1...5 { _ = inbox.append(sighting(UInt64(n))) }
    let taken = inbox.take(upTo: 10)
    #expect(taken.batch.map(\.token.value) == [3, 4, 5])
    #expect(taken.dropped == 2)
    #expect(inbox.take(upTo: 10).dropped == 0)
  }
}
