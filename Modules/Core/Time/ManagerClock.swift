/// The manager's clock (``MessageManager/Configuration/clock``) read as instants of one
/// concrete type, so that the manager's state machines (``BeaconTracking``) can keep and
/// compare times whatever clock a test injects.
///
/// An instant is the time passed on the clock since the `ManagerClock` was made. Reading and
/// sleeping may happen on any thread or actor.
struct ManagerClock: Sendable {
  /// A point in the manager's time: how long after the manager's start.
  struct Instant: InstantProtocol {
    var offset: Duration

    init(offset: Duration) { self.offset = offset }
    func advanced(by duration: Duration) -> Instant { Instant(offset: offset + duration) }
    func duration(to other: Instant) -> Duration { other.offset - offset }
    static func < (lhs: Instant, rhs: Instant) -> Bool { lhs.offset < rhs.offset }
    static func + (lhs: Instant, rhs: Duration) -> Instant { lhs.advanced(by: rhs) }
    static func - (lhs: Instant, rhs: Duration) -> Instant { lhs.advanced(by: .zero - rhs) }
  }

  private let clock: any Clock<Duration>
  private let read: @Sendable () -> Duration

  init(_ clock: any Clock<Duration>) {
    self.clock = clock
    self.read = Self.stopwatch(clock)
  }

  /// The time now.
  var now: Instant { Instant(offset: read()) }

  /// Waits for `duration` on the clock; throws `CancellationError` when the task is
  /// cancelled first.
  func sleep(for duration: Duration) async throws { try await clock.sleep(for: duration) }

  private static func stopwatch<C: Clock<Duration>>(_ clock: C) -> @Sendable () -> Duration {
    let start = clock.now
    return { start.duration(to: clock.now) }
  }
}
