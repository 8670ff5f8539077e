import NearbyTesting
import Testing

/// The waits that a change wakes: they end when their condition comes true, at their timeout,
/// or when their task is cancelled, and never depend on a polling interval.
@Suite struct ChangeSignalTests {
  @Test func aConditionThatHoldsEndsTheWaitAtOnce() async {
    let signal = ChangeSignal()
    var asked = 0
    let held = await signal.wait(timeout: .seconds(30)) {
      asked += 1
      return true
    }
    #expect(held)
    #expect(asked == 1)
  }

  @Test func aChangeWakesTheWaitAndItAsksAgain() async {
    let value = Watched(0)
    let waiting = Task { await value.until(timeout: .seconds(30)) { $0 == 3 } }
    for step in 1...3 { value.withLock { $0 = step } }
    #expect(await waiting.value)
  }

  @Test func aWaitAsksOnlyWhenSomethingChanged() async {
    let signal = ChangeSignal()
    let asked = Watched(0)
    let reached = Watched(false)
    let waiting = Task {
      await signal.wait(timeout: .seconds(30)) {
        asked.withLock { $0 += 1 }
        return reached.value
      }
    }
    // Asked once at the start, then once per change: three changes, four asks.
    #expect(await asked.until { $0 == 1 })
    signal.changed()
    #expect(await asked.until { $0 == 2 })
    signal.changed()
    #expect(await asked.until { $0 == 3 })
    reached.withLock { $0 = true }
    signal.changed()
    #expect(await waiting.value)
    #expect(asked.value == 4)
  }

  @Test func everyWaiterWakes() async {
    let value = Watched<[Int]>([])
    let waiters = (0..<5).map { wanted in
      Task { await value.until(timeout: .seconds(30)) { $0.contains(wanted) } }
    }
    for number in 0..<5 { value.withLock { $0.append(number) } }
    for waiter in waiters { #expect(await waiter.value) }
  }

  @Test func aConditionThatNeverHoldsEndsAtTheTimeout() async {
    let value = Watched(0)
    let started = ContinuousClock.now
    #expect(!(await value.until(timeout: .milliseconds(50)) { $0 == 1 }))
    #expect(ContinuousClock.now - started >= .milliseconds(50))
  }

  @Test func aCancelledWaitEndsWithoutItsCondition() async {
    let value = Watched(0)
    let started = Watched(false)
    let waiting = Task {
      await value.until(timeout: .seconds(30)) { number in
        started.withLock { $0 = true }
        return number == 1
      }
    }
    #expect(await started.until { $0 })
    waiting.cancel()
    #expect(!(await waiting.value))
  }

  @Test func aRecorderWakesItsWaitsAtEachElement() async {
    let (stream, continuation) = AsyncStream.makeStream(of: Int.self)
    let recorder = StreamRecorder(stream)
    let third = Task { await recorder.first(timeout: .seconds(30)) { $0 == 3 } }
    let all = Task { await recorder.until(timeout: .seconds(30)) { $0 == [1, 2, 3] } }
    for number in 1...3 { continuation.yield(number) }
    #expect(await third.value == 3)
    #expect(await all.value)
    continuation.finish()
    #expect(await recorder.waitUntilFinished(timeout: .seconds(30)))
  }
}
