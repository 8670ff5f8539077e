public import Core

/// A token bucket per address: at most ``burst`` datagrams (or bytes) at once, refilled at
/// ``perSecond``. The resolver keeps one per sender for what it receives and one per
/// destination for the bytes it sends. At most ``capacity`` senders are tracked; the one tracked longest is
/// forgotten to make room (it starts again with a full bucket).
public struct SenderRateLimiter: Sendable {
  private struct Bucket: Sendable {
    var tokens: Double
    var updatedAt: Double
  }

  public let perSecond: Double
  public let burst: Double
  public let capacity: Int
  private var buckets: [PeerAddress: Bucket] = [:]
  private var order: [PeerAddress] = []
  private var next = 0

  /// - Parameters:
  ///   - perSecond: the sustained rate each sender may send at.
  ///   - burst: how many datagrams a sender may send at once.
  ///   - capacity: the most senders tracked.
  public init(perSecond: Double = 20, burst: Double = 40, capacity: Int = 4096) {
    precondition(perSecond > 0 && burst >= 1 && capacity > 0, "invalid rate limit")
    self.perSecond = perSecond
    self.burst = burst
    self.capacity = capacity
  }

  /// How many senders are tracked.
  public var count: Int { buckets.count }

  /// Takes one datagram from `sender`'s bucket at `now` (seconds on any monotonic scale);
  /// false when the bucket is empty.
  public mutating func admit(_ sender: PeerAddress, now: Double) -> Bool {
    admit(sender, cost: 1, now: now)
  }

  /// Takes `cost` (datagrams, or bytes for a byte budget) from `sender`'s bucket at `now`;
  /// false, taking nothing, when the bucket holds less. A cost over ``burst`` never passes.
  public mutating func admit(_ sender: PeerAddress, cost: Double, now: Double) -> Bool {
    if var bucket = buckets[sender] {
      let elapsed = max(now - bucket.updatedAt, 0)
      bucket.tokens = min(burst, bucket.tokens + elapsed * perSecond)
      bucket.updatedAt = now
      guard bucket.tokens >= cost else {
        buckets[sender] = bucket
        return false
      }
      bucket.tokens -= cost
      buckets[sender] = bucket
      return true
    }
    guard cost <= burst else { return false }
    if order.count < capacity {
      order.append(sender)
    } else {
      buckets[order[next]] = nil
      order[next] = sender
      next = (next + 1) % capacity
    }
    buckets[sender] = Bucket(tokens: burst - cost, updatedAt: now)
    return true
  }
}
