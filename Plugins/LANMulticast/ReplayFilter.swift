/// Drops datagrams that are stale, from the future, or already seen, and spaces out the
/// sightings of a token that keeps being heard. Used by the I/O thread only.
struct ReplayFilter {
  /// The largest accepted |receive time − send time|, in milliseconds.
  let maximumSkew: UInt64
  /// The least time between two sightings of one token, in milliseconds.
  let sightingInterval: UInt64
  /// The most (sender, counter) pairs remembered; beyond it the oldest are forgotten (they
  /// are older than the skew window by then, in any realistic traffic).
  let capacity: Int

  private var seen: Set<UInt64> = []
  private var order: [UInt64] = []
  private var oldest = 0
  private var lastReported: [UInt64: UInt64] = [:]

  init(maximumSkew: UInt64, sightingInterval: UInt64, capacity: Int = 65_536) {
    self.maximumSkew = maximumSkew
    self.sightingInterval = sightingInterval
    self.capacity = capacity
  }

  enum Verdict: Sendable, Hashable {
    /// Report a sighting.
    case report
    /// A fresh datagram for a token reported less than the sighting interval ago.
    case recent
    /// Outside the clock skew window.
    case stale
    /// The same (sender, counter) again.
    case repeated
  }

  /// Judges a datagram received at `now` (milliseconds since the epoch).
  mutating func judge(_ datagram: Datagram, now: UInt64) -> Verdict {
    let skew = now > datagram.sentAt ? now - datagram.sentAt : datagram.sentAt - now
    guard skew <= maximumSkew else { return .stale }
    let id = UInt64(datagram.sender) << 32 | UInt64(datagram.counter)
    guard seen.insert(id).inserted else { return .repeated }
    remember(id)
    let token = datagram.token.value
    if let last = lastReported[token], now >= last, now - last < sightingInterval {
      return .recent
    }
    lastReported[token] = now
    if lastReported.count > capacity {
      lastReported = lastReported.filter { $0.value <= now && now - $0.value < maximumSkew }
    }
    return .report
  }

  /// Forgets when tokens were last reported (scanning restarted: report the next at once).
  mutating func resetSightings() { lastReported = [:] }

  private mutating func remember(_ id: UInt64) {
    order.append(id)
    if order.count - oldest > capacity {
      seen.remove(order[oldest])
      oldest += 1
      if oldest > capacity {
        order.removeFirst(oldest)
        oldest = 0
      }
    }
  }
}
