/// A token bucket per subject (an API key, a device, an address): `rate` requests a second on
/// average, bursts up to `burst`, both divided by the number of server instances sharing the
/// database (``setInstances(_:)``), so N instances together allow the configured rate, not N
/// times it. Buckets left alone long enough to be full again are forgotten when there are
/// many, so made-up subjects cannot grow the table without bound.
actor RateLimiter {
  struct Bucket {
    var tokens: Double
    var updatedAt: ContinuousClock.Instant
  }

  let rate: Double
  let burst: Double
  /// The most buckets kept before the full ones are dropped.
  let capacity: Int
  private var instances = 1
  private var buckets: [String: Bucket] = [:]

  init(rate: Double, burst: Double, capacity: Int = 100_000) {
    self.rate = rate
    self.burst = max(burst, 1)
    self.capacity = capacity
  }

  /// How many subjects have a bucket (for tests and diagnostics).
  var bucketCount: Int { buckets.count }

  /// This instance's share of the rate and burst: 1 / `count`.
  func setInstances(_ count: Int) { instances = max(count, 1) }

  private var shareRate: Double { rate / Double(instances) }
  private var shareBurst: Double { max(burst / Double(instances), 1) }

  /// Takes one token for `subject`; returns nil if allowed, or the seconds to wait.
  func take(_ subject: String) -> Int? {
    var bucket = refilled(subject)
    defer { store(bucket, for: subject) }
    if bucket.tokens >= 1 {
      bucket.tokens -= 1
      return nil
    }
    return wait(for: bucket)
  }

  /// The seconds to wait if `subject` has no token left, without taking one; nil if it has.
  func exhausted(_ subject: String) -> Int? {
    let bucket = refilled(subject)
    return bucket.tokens >= 1 ? nil : wait(for: bucket)
  }

  private func refilled(_ subject: String) -> Bucket {
    let now = ContinuousClock.now
    var bucket = buckets[subject] ?? Bucket(tokens: shareBurst, updatedAt: now)
    let elapsed = bucket.updatedAt.duration(to: now)
    let seconds = Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18
    bucket.tokens = min(shareBurst, bucket.tokens + seconds * shareRate)
    bucket.updatedAt = now
    return bucket
  }

  private func store(_ bucket: Bucket, for subject: String) {
    if buckets[subject] == nil, buckets.count >= capacity { forgetFullBuckets() }
    buckets[subject] = bucket
  }

  /// Drops the buckets that have refilled (they are as good as new); if that frees too
  /// little, starts over (every subject gets a full burst once more).
  private func forgetFullBuckets() {
    let now = ContinuousClock.now
    let refill = Duration.seconds(shareBurst / max(shareRate, 1e-9))
    buckets = buckets.filter { $0.value.updatedAt.duration(to: now) < refill }
    if buckets.count >= capacity * 3 / 4 { buckets.removeAll(keepingCapacity: true) }
  }

  private func wait(for bucket: Bucket) -> Int {
    // A rate of 0 waits forever: the answer says an hour (and never traps on infinity).
    let wait = ((1 - bucket.tokens) / shareRate).rounded(.up)
    return wait.isFinite ? max(1, Int(min(wait, 3600))) : 3600
  }
}
