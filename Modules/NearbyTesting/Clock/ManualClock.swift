import Synchronization

/// A clock that moves only when a test tells it to (``advance(by:)``), so that a test waits
/// on a manager's timers without sleeping: sleepers wake in deadline order as time passes
/// their deadline. Give it to the manager's configuration (`clock` of Core's
/// `MessageManager.Configuration`).
///
/// All methods may be called from any thread; a `Mutex` guards the time and the sleepers.
public final class ManualClock: Clock, Sendable {
  /// A point on a ``ManualClock``: how far it has been advanced since it was made.
  public struct Instant: InstantProtocol {
    /// Time since the clock's start.
    public var offset: Duration

    public init(offset: Duration) { self.offset = offset }
    public func advanced(by duration: Duration) -> Instant {
      Instant(offset: offset + duration)
    }
    public func duration(to other: Instant) -> Duration { other.offset - offset }
    public static func < (lhs: Instant, rhs: Instant) -> Bool { lhs.offset < rhs.offset }
  }

  private struct Sleeper {
    let deadline: Instant
    let continuation: CheckedContinuation<Void, any Error>
  }
  private struct State {
    var now = Instant(offset: .zero)
    var sleepers: [UInt64: Sleeper] = [:]
    var nextSleeper: UInt64 = 0
  }
  private let state = Mutex(State())
  private let changes = ChangeSignal()

  public init() {}

  public var now: Instant { state.withLock { $0.now } }
  /// The smallest step the clock takes.
  public var minimumResolution: Duration { .nanoseconds(1) }
  /// How many tasks are sleeping on this clock now (so a test can wait until a timer is
  /// set before advancing past it).
  public var sleeperCount: Int { state.withLock { $0.sleepers.count } }

  /// Waits until `condition` holds for ``sleeperCount``, asking it now and each time a task
  /// starts or stops sleeping on this clock, for at most `timeout` (on the continuous clock,
  /// not this one); returns whether it held. For a test that must know a timer is set before
  /// it advances past it: `await clock.untilSleepers { $0 == 1 }`.
  public func untilSleepers(
    timeout: Duration = defaultWaitBound, _ condition: (Int) throws -> Bool
  ) async rethrows -> Bool {
    try await changes.wait(timeout: timeout) { try condition(sleeperCount) }
  }

  /// Returns once the clock reaches `deadline` (at once if it has); throws
  /// `CancellationError` when the task is cancelled first.
  public func sleep(until deadline: Instant, tolerance: Duration? = nil) async throws {
    let id = state.withLock { state in
      defer { state.nextSleeper += 1 }
      return state.nextSleeper
    }
    try await withTaskCancellationHandler {
      try await withCheckedThrowingContinuation {
        (continuation: CheckedContinuation<Void, any Error>) in
        let resume: Result<Void, any Error>? = state.withLock { state in
          if Task.isCancelled { return .failure(CancellationError()) }
          if deadline <= state.now { return .success(()) }
          state.sleepers[id] = Sleeper(deadline: deadline, continuation: continuation)
          return nil
        }
        if let resume { continuation.resume(with: resume) } else { changes.changed() }
      }
    } onCancel: {
      let sleeper = state.withLock { $0.sleepers.removeValue(forKey: id) }
      sleeper?.continuation.resume(throwing: CancellationError())
      if sleeper != nil { changes.changed() }
    }
  }

  /// Moves the clock forward by `duration` and wakes, in deadline order, every sleeper whose
  /// deadline has come.
  public func advance(by duration: Duration) {
    let woken: [Sleeper] = state.withLock { state in
      state.now = state.now.advanced(by: duration)
      let now = state.now
      let due = state.sleepers.filter { $0.value.deadline <= now }
      for id in due.keys { state.sleepers[id] = nil }
      return due.values.sorted { $0.deadline < $1.deadline }
    }
    for sleeper in woken { sleeper.continuation.resume() }
    if !woken.isEmpty { changes.changed() }
  }
}
