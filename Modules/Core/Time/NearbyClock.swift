/// One injected clock read as instants of one concrete type, so that state machines can keep
/// and compare times whatever clock is given: the manager's
/// (``MessageManager/Configuration/clock``) and the plugins' engines take a
/// `any Clock<Duration>` (`ContinuousClock` by default, a manual clock in tests) and read it
/// through this.
///
/// An instant is the time passed on the clock since the `NearbyClock` was made: instants of
/// two `NearbyClock`s are not comparable. Reading and sleeping may happen on any thread or
/// actor.
public struct NearbyClock: Sendable {
  /// A point in the clock's time: how long after the `NearbyClock` was made.
  public struct Instant: InstantProtocol {
    /// The time since the clock was made.
    public var offset: Duration

    public init(offset: Duration) { self.offset = offset }
    public func advanced(by duration: Duration) -> Instant { Instant(offset: offset + duration) }
    public func duration(to other: Instant) -> Duration { other.offset - offset }
    public static func < (lhs: Instant, rhs: Instant) -> Bool { lhs.offset < rhs.offset }
    public static func + (lhs: Instant, rhs: Duration) -> Instant { lhs.advanced(by: rhs) }
    public static func - (lhs: Instant, rhs: Duration) -> Instant {
      lhs.advanced(by: .zero - rhs)
    }
    /// The time from `rhs` to `lhs`.
    public static func - (lhs: Instant, rhs: Instant) -> Duration { lhs.offset - rhs.offset }
  }

  private let clock: any Clock<Duration>
  private let read: @Sendable () -> Duration
  private let sleepUntil: @Sendable (Duration) async throws -> Void

  /// Starts reading `clock` now: ``now`` is zero at this instant.
  public init(_ clock: any Clock<Duration>) {
    self.clock = clock
    (self.read, self.sleepUntil) = Self.anchored(clock)
  }

  /// The time now.
  public var now: Instant { Instant(offset: read()) }

  /// Waits for `duration` on the clock.
  /// - Throws: `CancellationError` when the task is cancelled first.
  public func sleep(for duration: Duration) async throws { try await clock.sleep(for: duration) }

  /// Waits until `deadline` on the clock (at once when it has passed). The deadline is an
  /// instant of the underlying clock, not a duration from a reading of it: a clock that moves
  /// between that reading and the sleep (a test's hand-moved clock) still wakes the sleeper
  /// at `deadline`, not a step later.
  /// - Throws: `CancellationError` when the task is cancelled first.
  public func sleep(until deadline: Instant) async throws {
    guard now < deadline else {
      try Task.checkCancellation()
      return
    }
    try await sleepUntil(deadline.offset)
  }

  /// A reading of `clock` and a sleep until an offset, both from one start instant.
  private static func anchored<C: Clock<Duration>>(_ clock: C) -> (
    read: @Sendable () -> Duration, sleepUntil: @Sendable (Duration) async throws -> Void
  ) {
    let start = clock.now
    return (
      { start.duration(to: clock.now) },
      { offset in try await clock.sleep(until: start.advanced(by: offset), tolerance: nil) }
    )
  }
}
