import NIOCore
import Testing

@testable import NearbyServer

/// The connection deadlines on instants (issue 39): a body read before authentication has the
/// short deadline, one after it the long; an answer before its body was read drops the rest
/// of the body (and, for a closing connection, anything after), timed from the answer.
@Suite("Request deadlines on instants")
struct RequestDeadlineStateMachineTests {
  let start = NIODeadline.uptimeNanoseconds(1_000_000_000)

  func at(_ seconds: Int64) -> NIODeadline { start + .seconds(seconds) }

  func machine(unauthenticatedBody: Int64 = 10) -> RequestDeadlineStateMachine {
    var machine = RequestDeadlineStateMachine(
      timeouts: .init(
        head: .seconds(5), body: .seconds(30), unauthenticatedBody: .seconds(unauthenticatedBody)))
    machine.opened(now: at(0))
    return machine
  }

  @Test func aBodyHasTheShortDeadlineUntilTheRequestAuthenticates() {
    var machine = machine()
    #expect(machine.deadline == at(5))
    #expect(machine.head(closes: false, now: at(1)) == .forward)
    #expect(machine.deadline == at(11))
    #expect(machine.bodyPart() == .forward)
    machine.authenticated()
    #expect(machine.deadline == at(31))  // from the head, not from the authentication
    #expect(machine.end(now: at(20)) == .forward)
    #expect(machine.deadline == nil)  // the answer is not timed
    machine.answerEnded(now: at(40))
    #expect(machine.deadline == at(45))
    #expect(!machine.isDropping)
  }

  @Test func theShortDeadlineIsNeverLongerThanTheBodyDeadline() {
    var machine = machine(unauthenticatedBody: 60)
    _ = machine.head(closes: false, now: at(1))
    #expect(machine.deadline == at(31))
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
    machine.authenticated()  // too late: the answer is out
    #expect(machine.deadline == at(7))
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
    #expect(machine.deadline == at(12))
    machine.answerEnded(now: at(3))
    #expect(!machine.isDropping)
    #expect(machine.bodyPart() == .forward)
    #expect(machine.deadline == at(12))
    machine.answerEnded(now: at(4))
    #expect(machine.isDropping)
    #expect(machine.deadline == at(9))
  }
}
