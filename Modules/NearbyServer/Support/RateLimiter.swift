/// A token bucket per API key: `rate` requests a second on average, bursts up to `burst`.
actor RateLimiter {
  struct Bucket {
    var tokens: Double
    var updatedAt: ContinuousClock.Instant
  }

  let rate: Double
  let burst: Double
  private var buckets: [String: Bucket] = [:]

  init(rate: Double, burst: Double) {
    self.rate = rate
    self.burst = max(burst, 1)
  }

  /// Takes one token for `key`; returns nil if allowed, or the seconds to wait.
  func take(_ key: String) -> Int? {
    let now = ContinuousClock.now
    var bucket = buckets[key] ?? Bucket(tokens: burst, updatedAt: now)
    let elapsed = bucket.updatedAt.duration(to: now)
    let seconds = Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18
    bucket.tokens = min(burst, bucket.tokens + seconds * rate)
    bucket.updatedAt = now
    defer { buckets[key] = bucket }
    if bucket.tokens >= 1 {
      bucket.tokens -= 1
      return nil
    }
    // A rate of 0 waits forever: the answer says an hour (and never traps on infinity).
    let wait = ((1 - bucket.tokens) / rate).rounded(.up)
    return wait.isFinite ? max(1, Int(min(wait, 3600))) : 3600
  }
}
