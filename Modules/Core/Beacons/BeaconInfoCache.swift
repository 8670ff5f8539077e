/// The resolver's answers for observed beacon ids, kept for a while so that a beacon heard
/// many times a second costs one lookup per TTL (contract: "results cached on the client").
///
/// A known beacon is kept for ``ttl``; an id the resolver does not know for a fifth of it (so
/// that a beacon registered a moment later is found soon); a failed lookup is retried after
/// ``retryAfter``. At most ``capacity`` ids are kept (the ones that expire first go first).
/// A value owned by the manager's actor.
struct BeaconInfoCache {
  enum Lookup: Equatable {
    /// Known, or known to be unknown (`nil`).
    case answer(BeaconInfo?)
    /// Not cached (or expired) and no lookup running: start one.
    case miss
    /// A lookup is running, or failed recently.
    case pending
  }

  let ttl: Duration
  let retryAfter: Duration
  let capacity: Int
  private var entries: [BeaconID: (info: BeaconInfo?, expires: ContinuousClock.Instant)] = [:]
  private var inFlight: Set<BeaconID> = []
  private var failedUntil: [BeaconID: ContinuousClock.Instant] = [:]

  init(ttl: Duration, retryAfter: Duration = .seconds(5), capacity: Int = 4096) {
    self.ttl = ttl
    self.retryAfter = retryAfter
    self.capacity = capacity
  }

  /// What is known of `id` at `now`; a miss marks a lookup as started.
  mutating func lookup(_ id: BeaconID, now: ContinuousClock.Instant) -> Lookup {
    if let entry = entries[id], entry.expires > now { return .answer(entry.info) }
    if inFlight.contains(id) { return .pending }
    if let until = failedUntil[id], until > now { return .pending }
    inFlight.insert(id)
    return .miss
  }

  /// Stores the answer of a lookup.
  mutating func store(_ info: BeaconInfo?, for id: BeaconID, now: ContinuousClock.Instant) {
    inFlight.remove(id)
    failedUntil[id] = nil
    let lifetime = info == nil ? ttl / 5 : ttl
    entries[id] = (info, now + lifetime)
    guard entries.count > capacity else { return }
    entries = entries.filter { $0.value.expires > now }
    while entries.count > capacity,
      let first = entries.min(by: { $0.value.expires < $1.value.expires })
    {
      entries[first.key] = nil
    }
  }

  /// Notes a failed lookup: retried after ``retryAfter``.
  mutating func failed(_ id: BeaconID, now: ContinuousClock.Instant) {
    inFlight.remove(id)
    failedUntil[id] = now + retryAfter
  }

  /// How many ids are cached.
  var count: Int { entries.count }
}
