import Synchronization

/// A token bucket per subject (an API key, a device, an address): `rate` requests a second on
/// average, bursts up to `burst`, both divided by the number of server instances sharing the
/// database (``setInstances(_:)``), so N instances together allow the configured rate, not N
/// times it. Buckets left alone long enough to be full again are forgotten when there are
/// many, so made-up subjects cannot grow the table without bound.
///
/// Its state is behind a `Mutex`, so it is called synchronously from any thread or task: a
/// request pays no actor hop per limit, and a check can run inside a database transaction's
/// body (the per-device budget is taken only once the device has authenticated).
final class RateLimiter: Sendable {
  struct Bucket {
    var tokens: Double
    /// How long after the limiter's start it was last refilled.
    var updatedAt: Duration
  }

  private struct State {
    var instances = 1
    var buckets: [String: Bucket] = [:]
  }

  let rate: Double
  let burst: Double
  /// The most buckets kept before the full ones are dropped.
  let capacity: Int
  private let state = Mutex(State())
  /// The time on the limiter's clock since it started.
  private let elapsed: @Sendable () -> Duration

  /// - Parameter clock: what rates are measured on (the server's
  ///   ``ResolverServerConfiguration/clock``).
  init(
    rate: Double, burst: Double, capacity: Int = 100_000,
    clock: any Clock<Duration> = ContinuousClock()
  ) {
    self.rate = rate
    self.burst = max(burst, 1)
    self.capacity = capacity
    elapsed = Self.stopwatch(clock)
  }

  private static func stopwatch<C: Clock<Duration>>(_ clock: C) -> @Sendable () -> Duration {
    let start = clock.now
    return { start.duration(to: clock.now) }
  }

  /// How many subjects have a bucket (for tests and diagnostics).
  var bucketCount: Int { state.withLock { $0.buckets.count } }

  /// This instance's share of the rate and burst: 1 / `count`.
  func setInstances(_ count: Int) { state.withLock { $0.instances = max(count, 1) } }

  /// Takes one token for `subject`; returns nil if allowed, or the seconds to wait.
  func take(_ subject: String) -> Int? {
    state.withLock { state in
      let share = share(state)
      var bucket = refilled(state.buckets[subject], share: share)
      defer { store(bucket, for: subject, in: &state, share: share) }
      if bucket.tokens >= 1 {
        bucket.tokens -= 1
        return nil
      }
      return wait(for: bucket, share: share)
    }
  }

  /// The seconds to wait if `subject` has no token left, without taking one; nil if it has.
  func exhausted(_ subject: String) -> Int? {
    state.withLock { state in
      let share = share(state)
      let bucket = refilled(state.buckets[subject], share: share)
      return bucket.tokens >= 1 ? nil : wait(for: bucket, share: share)
    }
  }

  private func share(_ state: State) -> (rate: Double, burst: Double) {
    (rate / Double(state.instances), max(burst / Double(state.instances), 1))
  }

  private func refilled(_ stored: Bucket?, share: (rate: Double, burst: Double)) -> Bucket {
    let now = elapsed()
    var bucket = stored ?? Bucket(tokens: share.burst, updatedAt: now)
    let since = now - bucket.updatedAt
    bucket.tokens = min(share.burst, bucket.tokens + since.seconds * share.rate)
    bucket.updatedAt = now
    return bucket
  }

  private func store(
    _ bucket: Bucket, for subject: String, in state: inout State,
    share: (rate: Double, burst: Double)
  ) {
    if state.buckets[subject] == nil, state.buckets.count >= capacity {
      forgetFullBuckets(&state, share: share)
    }
    state.buckets[subject] = bucket
  }

  /// Drops the buckets that have refilled (they are as good as new); if that frees too
  /// little, starts over (every subject gets a full burst once more).
  private func forgetFullBuckets(_ state: inout State, share: (rate: Double, burst: Double)) {
    let now = elapsed()
    let refill = Duration.seconds(share.burst / max(share.rate, 1e-9))
    state.buckets = state.buckets.filter { now - $0.value.updatedAt < refill }
    if state.buckets.count >= capacity * 3 / 4 { state.buckets.removeAll(keepingCapacity: true) }
  }

  private func wait(for bucket: Bucket, share: (rate: Double, burst: Double)) -> Int {
    // A rate of 0 waits forever: the answer says an hour (and never traps on infinity).
    let wait = ((1 - bucket.tokens) / share.rate).rounded(.up)
    return wait.isFinite ? max(1, Int(min(wait, 3600))) : 3600
  }
}
