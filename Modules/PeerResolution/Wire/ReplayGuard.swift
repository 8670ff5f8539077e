/// Drops datagrams sent outside the clock window and datagrams whose nonce was already seen.
///
/// The nonces of accepted datagrams (12 random bytes each) are kept in a ring of at most
/// ``capacity`` entries with a set beside it, so memory is fixed and each datagram costs O(1):
/// the oldest nonce is forgotten to make room. A forgotten nonce re-sent inside the window is
/// accepted once more; at 65 536 that needs more than 2 000 authenticated datagrams a second
/// for the whole window, which the per-sender rate limit refuses long before.
struct ReplayGuard {
  private struct Nonce: Hashable {
    let high: UInt64
    let low: UInt32
  }

  let capacity: Int
  let windowMilliseconds: UInt64
  private var seen: Set<Nonce> = []
  private var ring: [Nonce] = []
  private var next = 0

  init(capacity: Int = 65_536, windowMilliseconds: UInt64 = PeerLimits.clockWindowMilliseconds) {
    precondition(capacity > 0, "a replay guard needs room for one nonce")
    self.capacity = capacity
    self.windowMilliseconds = windowMilliseconds
  }

  /// How many nonces are remembered (at most ``capacity``).
  var count: Int { seen.count }

  /// Whether a datagram sent at `sentAt` is within the window of `now` (both in ms since 1970).
  func isFresh(sentAt: UInt64, now: UInt64) -> Bool {
    (now > sentAt ? now - sentAt : sentAt - now) <= windowMilliseconds
  }

  /// Remembers `nonce` (12 bytes); false when it was already remembered. Call it only for
  /// authenticated datagrams, so that nobody without the key can fill the ring.
  mutating func admit(nonce bytes: [UInt8]) -> Bool {
    precondition(bytes.count == 12, "nonces are 12 bytes")
    let nonce = Nonce(
      high: bytes[0..<8].reduce(0) { $0 << 8 | UInt64($1) },
      low: bytes[8..<12].reduce(0) { $0 << 8 | UInt32($1) })
    guard seen.insert(nonce).inserted else { return false }
    if ring.count < capacity {
      ring.append(nonce)
    } else {
      seen.remove(ring[next])
      ring[next] = nonce
      next = (next + 1) % capacity
    }
    return true
  }
}
