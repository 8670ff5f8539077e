import Dispatch
import Foundation
import Synchronization

/// A dedicated thread that runs a store's blocking file work (flock, fsync, rename) so that it
/// never blocks Swift's cooperative pool. Work is queued; each time the thread wakes it takes
/// everything queued and hands it to `process` at once, so writes queued while a previous
/// fsync ran are committed together (group commit).
final class StoreThread<Job: Sendable>: Sendable {
  private struct State {
    var queue: [Job] = []
    var stopping = false
  }
  /// Shared with the thread: the mutex guards the queue; the semaphore counts wake-ups.
  private final class Shared: Sendable {
    let state = Mutex(State())
    let wakeUp = DispatchSemaphore(value: 0)
    let finished = DispatchSemaphore(value: 0)
  }
  private let shared = Shared()
  private var wakeUp: DispatchSemaphore { shared.wakeUp }

  /// Starts the thread; `process` runs on it with every batch of jobs, in queue order, and
  /// `drain` with the jobs still queued when the thread stops.
  init(
    name: String, process: @escaping @Sendable ([Job]) -> Void,
    drain: @escaping @Sendable ([Job]) -> Void
  ) {
    let thread = Thread { [shared] in
      while true {
        shared.wakeUp.wait()
        let (jobs, stopping) = shared.state.withLock { state in
          defer { state.queue.removeAll(keepingCapacity: true) }
          return (state.queue, state.stopping)
        }
        if stopping {
          drain(jobs)
          shared.finished.signal()
          return
        }
        if !jobs.isEmpty { process(jobs) }
      }
    }
    thread.name = name
    thread.start()
  }

  /// Queues `job`; returns false when the thread has been stopped.
  @discardableResult
  func submit(_ job: Job) -> Bool {
    let accepted = shared.state.withLock { state in
      guard !state.stopping else { return false }
      state.queue.append(job)
      return true
    }
    if accepted { wakeUp.signal() }
    return accepted
  }

  /// Stops the thread after the batch it is running; jobs still queued go to `drain`. Blocks
  /// until the thread has stopped only when `wait` is true.
  func stop(wait: Bool) {
    let first = shared.state.withLock { state in
      defer { state.stopping = true }
      return !state.stopping
    }
    guard first else { return }
    wakeUp.signal()
    if wait { shared.finished.wait() }
  }
}
