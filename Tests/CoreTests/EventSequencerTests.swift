import Testing

@_spi(Resolver) @testable import Core

/// The resolver's events put back in order, on values.
@Suite("EventSequencer")
struct EventSequencerTests {
  /// Distinct events, numbered 0…, read back by number.
  static let ids = (0...(EventSequencer.holdLimit + 20)).map { _ in PublicationID.random() }
  static let numberOf = Dictionary(
    uniqueKeysWithValues: ids.enumerated().map { ($1, UInt64($0)) })

  func event(_ n: UInt64) -> SequencedEvent {
    SequencedEvent(sequence: n, event: .publicationExpired(Self.ids[Int(n)]))
  }

  func numbers(_ events: [ResolverEvent]) -> [UInt64] {
    events.map {
      guard case .publicationExpired(let id) = $0 else { return 0 }
      return Self.numberOf[id] ?? 0
    }
  }

  @Test("in order: released at once")
  func inOrder() {
    var sequencer = EventSequencer()
    #expect(numbers(sequencer.receive([event(1), event(2)]).release) == [1, 2])
    #expect(numbers(sequencer.receive([event(3)]).release) == [3])
    #expect(sequencer.next == 4)
  }

  @Test("an early event waits for the ones before it, then all go in order")
  func earlyEventsWait() {
    var sequencer = EventSequencer()
    #expect(sequencer.receive([event(3), event(2)]).release.isEmpty)
    #expect(sequencer.heldCount == 2)
    #expect(numbers(sequencer.receive([event(1)]).release) == [1, 2, 3])
    #expect(sequencer.heldCount == 0)
  }

  @Test("an event already released, or received twice, is ignored")
  func duplicatesIgnored() {
    var sequencer = EventSequencer()
    _ = sequencer.receive([event(1), event(2)])
    #expect(sequencer.receive([event(1), event(2)]).release.isEmpty)
    #expect(sequencer.receive([event(4), event(4)]).release.isEmpty)
    #expect(numbers(sequencer.receive([event(3)]).release) == [3, 4])
  }

  @Test("past the hold limit the missing numbers are given up on, counted, and the rest released")
  func holdLimit() {
    var sequencer = EventSequencer()
    // Number 1 never comes; 11… arrive.
    let limit = UInt64(EventSequencer.holdLimit)
    let first = sequencer.receive((11...(10 + limit)).map(event))
    #expect(first.release.isEmpty)
    #expect(first.skipped == 0)
    let over = sequencer.receive([event(11 + limit)])
    #expect(over.skipped == 10)
    #expect(numbers(over.release) == Array(11...(11 + limit)))
    #expect(sequencer.heldCount == 0)
    // A straggler from before is ignored.
    #expect(sequencer.receive([event(1)]).release.isEmpty)
  }
}
