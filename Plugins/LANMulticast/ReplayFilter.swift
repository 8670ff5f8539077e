/// Drops datagrams that are stale, from the future, or already seen, and spaces out the
/// sightings of a token that keeps being heard; a token heard with another digest than the
/// one last reported is reported at once (the sender's handles changed: its hearers ask now).
/// Used by the I/O thread only.
///
/// Memory is fixed and the work per datagram constant: the (sender, counter) pairs seen and
/// the tokens reported are each kept in a ``BoundedMap`` of at most ``capacity`` entries,
/// which forgets the oldest one to make room. Beyond the capacity, a forgotten pair sent again
/// inside the clock window is accepted once more, and a forgotten token is reported once
/// before the sighting interval is up; neither is a flood (each forgotten entry buys at most
/// one extra sighting), and at 65 536 that needs more distinct senders than a segment holds.
struct ReplayFilter {
  /// The largest accepted |receive time − send time|, in milliseconds.
  let maximumSkew: UInt64
  /// The least time between two sightings of one token, in milliseconds.
  let sightingInterval: UInt64
  /// The most (sender, counter) pairs, and the most tokens, remembered.
  var capacity: Int { seen.capacity }

  private var seen: BoundedMap<UInt64, Void>
  /// When each token was last reported, and with which digest (0: none).
  private var lastReported: BoundedMap<UInt64, (at: UInt64, digest: UInt64)>

  init(maximumSkew: UInt64, sightingInterval: UInt64, capacity: Int = 65_536) {
    self.maximumSkew = maximumSkew
    self.sightingInterval = sightingInterval
    seen = BoundedMap(capacity: capacity)
    lastReported = BoundedMap(capacity: capacity)
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

  /// How many (sender, counter) pairs and how many tokens are remembered (each at most
  /// ``capacity``).
  var entries: (pairs: Int, tokens: Int) { (seen.count, lastReported.count) }

  /// Insertions, updates and evictions done so far: at most four per datagram.
  var operations: Int { seen.operations + lastReported.operations }

  /// Judges a datagram received at `now` (milliseconds since the epoch).
  mutating func judge(_ datagram: Datagram, now: UInt64) -> Verdict {
    let skew = now > datagram.sentAt ? now - datagram.sentAt : datagram.sentAt - now
    guard skew <= maximumSkew else { return .stale }
    let id = UInt64(datagram.sender) << 32 | UInt64(datagram.counter)
    guard seen.insert(id, ()) else { return .repeated }
    let token = datagram.token.value
    if let last = lastReported[token], last.digest == datagram.digest, now >= last.at,
      now - last.at < sightingInterval
    {
      return .recent
    }
    lastReported.set((now, datagram.digest), for: token)
    return .report
  }

  /// Forgets when tokens were last reported (scanning restarted: report the next at once).
  mutating func resetSightings() { lastReported.removeAll() }
}

/// A dictionary of at most `capacity` entries that forgets the oldest inserted entry to make
/// room for a new one. Memory is fixed (the table and a ring of `capacity` keys) and every
/// operation is O(1) amortised: no sweep, whatever arrives.
struct BoundedMap<Key: Hashable, Value> {
  let capacity: Int
  private var values: [Key: Value] = [:]
  /// The keys in insertion order, as a ring: it grows to `capacity`, then `next` is the
  /// oldest, overwritten by the next insertion.
  private var order: [Key] = []
  private var next = 0
  /// Insertions, updates and evictions done so far (for tests that bound the work).
  private(set) var operations = 0

  init(capacity: Int) {
    precondition(capacity > 0, "a BoundedMap needs room for one entry")
    self.capacity = capacity
  }

  var count: Int { values.count }

  subscript(key: Key) -> Value? { values[key] }

  /// Adds `key` if absent, forgetting the oldest entry when full.
  /// - Returns: whether `key` was absent (and is now added).
  @discardableResult
  mutating func insert(_ key: Key, _ value: Value) -> Bool {
    operations += 1
    guard values[key] == nil else { return false }
    values[key] = value
    enqueue(key)
    return true
  }

  /// Sets the value of `key`. A key already present keeps its place in the eviction order;
  /// a new one is added, forgetting the oldest entry when full.
  mutating func set(_ value: Value, for key: Key) {
    operations += 1
    if values.updateValue(value, forKey: key) == nil { enqueue(key) }
  }

  mutating func removeAll() {
    values.removeAll(keepingCapacity: true)
    order.removeAll(keepingCapacity: true)
    next = 0
  }

  /// Records a key just added to `values`, evicting the oldest when the ring is full.
  private mutating func enqueue(_ key: Key) {
    if order.count < capacity {
      order.append(key)
      return
    }
    operations += 1
    values[order[next]] = nil
    order[next] = key
    next = next + 1 == capacity ? 0 : next + 1
  }
}
