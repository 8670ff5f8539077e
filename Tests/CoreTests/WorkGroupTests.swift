import NearbyTesting
import Synchronization
import Testing

@testable import Core

/// The one task group an actor's work runs in: what `end()` ends, what `ended()` waits for,
/// and which work counts as the group's own.
@Suite("Work group")
struct WorkGroupTests {
  @Test("ended() returns once the work it ended is over, then the afterwards step has run")
  func endCancelsTheWorkAndEndedAwaitsIt() async {
    let steps = Mutex<[String]>([])
    let group = WorkGroup(afterwards: { steps.withLock { $0.append("afterwards") } })
    let (started, signal) = AsyncStream.makeStream(of: Void.self)
    group.start {
      signal.yield()
      _ = try? await untilCancelled()
      steps.withLock { $0.append("cancelled") }
    }
    var iterator = started.makeAsyncIterator()
    _ = await iterator.next()
    #expect(group.running == 1)
    group.end()
    await group.ended()
    #expect(steps.withLock { $0 } == ["cancelled", "afterwards"])
    #expect(group.running == 0)
    // Work handed in after the end never runs.
    group.start { steps.withLock { $0.append("late") } }
    #expect(group.running == 0)
    #expect(steps.withLock { $0 } == ["cancelled", "afterwards"])
  }

  @Test("work is the group's own inside it only, and not another group's")
  func isCurrentNamesTheGroup() async {
    let (mine, other) = (WorkGroup(), WorkGroup())
    #expect(!mine.isCurrent)
    let (answers, answer) = AsyncStream.makeStream(of: (Bool, Bool).self)
    mine.start { answer.yield((mine.isCurrent, other.isCurrent)) }
    var iterator = answers.makeAsyncIterator()
    let seen = await iterator.next()
    #expect(seen?.0 == true)
    #expect(seen?.1 == false)
    mine.end()
    other.end()
    await mine.ended()
    await other.ended()
  }

  @Test("finish() lets work run to its end; end() after it still cancels it")
  func endAfterFinishCancels() async {
    let group = WorkGroup()
    let (started, signal) = AsyncStream.makeStream(of: Void.self)
    let outcome = Mutex<String?>(nil)
    group.start {
      signal.yield()
      let ended = (try? await untilCancelled()) == nil ? "cancelled" : "ran"
      outcome.withLock { $0 = ended }
    }
    group.finish()
    var iterator = started.makeAsyncIterator()
    _ = await iterator.next()
    #expect(group.running == 1)
    group.end()
    await group.ended()
    #expect(outcome.withLock { $0 } == "cancelled")
    #expect(group.running == 0)
  }
}
