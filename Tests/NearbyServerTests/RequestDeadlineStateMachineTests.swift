import NIOCore
import Testing

@testable import NearbyServer

/// The connection deadlines on instants (issue 39): an answer before its body was read drops
/// the rest of the body (and, for a closing connection, anything after), timed from the
/// answer.
@Suite("Request deadlines on instants")
struct RequestDeadlineStateMachineTests {
  let start = NIODeadline.uptimeNanoseconds(1_000_000_000)

  func at(_ seconds: Int64) -> NIODeadline { start + .seconds(seconds) }

  func machine() -> RequestDeadlineStateMachine {
    var machine = RequestDeadlineStateMachine(
      timeouts: .init(head: .seconds(5), body: .seconds(30)))
    machine.opened(now: at(0))
    return machine
  }

  /// A 413 or 401 before the body was read: the rest is read and dropped, the end passed on
  /// (the server waits for it), and the next head timed from the end.
  @Test func anEarlyAnswerDropsTheRestOfTheBody() {
    var machine = machine()
    _ = machine.head(closes: false, now: at(1))
    machine.answerEnded(now: at(2))
    #expect(machine.isDropping)
    #expect(machine.deadline == at(7))
    #expect(machine.bodyPart() == .drop)
    #expect(machine.end(now: at(3)) == .forward)
    #expect(!machine.isDropping)
    #expect(machine.deadline == at(8))
    #expect(machine.head(closes: false, now: at(4)) == .forward)
    #expect(machine.bodyPart() == .forward)
  }

  /// `Connection: close`: once answered, nothing more is a request; what comes is read (so the
  /// client's close is seen) and dropped.
  @Test func aClosingConnectionDropsEverythingAfterItsAnswer() {
    var machine = machine()
    _ = machine.head(closes: true, now: at(1))
    #expect(machine.end(now: at(1)) == .forward)
    #expect(!machine.isDropping)
    machine.answerEnded(now: at(2))
    #expect(machine.isDropping)
    #expect(machine.deadline == at(7))
    #expect(machine.head(closes: false, now: at(3)) == .drop)
    #expect(machine.bodyPart() == .drop)
    #expect(machine.end(now: at(3)) == .drop)
    #expect(machine.deadline == at(7))
  }

  /// A pipelined request: the earlier answer neither drops the later body nor moves its
  /// deadline; the later answer does.
  @Test func pipelinedRequestsKeepTheirOwnDeadlines() {
    var machine = machine()
    _ = machine.head(closes: false, now: at(1))
    _ = machine.end(now: at(1))
    _ = machine.head(closes: false, now: at(2))
    #expect(machine.deadline == at(32))
    machine.answerEnded(now: at(3))
    #expect(!machine.isDropping)
    #expect(machine.bodyPart() == .forward)
    #expect(machine.deadline == at(32))
    machine.answerEnded(now: at(4))
    #expect(machine.isDropping)
    #expect(machine.deadline == at(9))
  }
}
