/// The resolver's answers for observed beacon ids, kept for a while so that a beacon heard
/// many times a second costs one lookup per TTL (contract: "results cached on the client").
///
/// A known beacon is kept for ``ttl``; an id the resolver does not know for a fifth of it (so
/// that a beacon registered a moment later is found soon). An expired answer is refreshed but
/// still served while the refresh runs, and after it fails (retried after ``retryAfter``), so
/// that a slow or unreachable resolver never makes a beacon in range look lost. At most
/// ``capacity`` ids are kept (the expired, then the ones that expire first, go first).
/// A value owned by ``BeaconTracking``.
struct BeaconInfoCache {
  enum Lookup: Equatable {
    /// Known, or known to be unknown (`nil`); `refresh`: the answer has expired and no
    /// lookup runs: start one (the caller may use the answer meanwhile).
    case answer(BeaconInfo?, refresh: Bool)
    /// Never answered and no lookup running: start one.
    case miss
    /// Never answered; a lookup is running, or failed recently.
    case pending
  }

  let ttl: Duration
  let retryAfter: Duration
  let capacity: Int
  private var entries: [BeaconID: (info: BeaconInfo?, expires: NearbyClock.Instant)] = [:]
  private var inFlight: Set<BeaconID> = []
  private var failedUntil: [BeaconID: NearbyClock.Instant] = [:]

  init(ttl: Duration, retryAfter: Duration = .seconds(5), capacity: Int = 4096) {
    self.ttl = ttl
    self.retryAfter = retryAfter
    self.capacity = capacity
  }

  /// What is known of `id` at `now`; a miss marks a lookup as started.
  mutating func lookup(_ id: BeaconID, now: NearbyClock.Instant) -> Lookup {
    let entry = entries[id]
    if let entry, entry.expires > now { return .answer(entry.info, refresh: false) }
    let waiting = inFlight.contains(id) || (failedUntil[id].map { $0 > now } ?? false)
    if !waiting { inFlight.insert(id) }
    guard let entry else { return waiting ? .pending : .miss }
    return .answer(entry.info, refresh: !waiting)
  }

  /// Stores the answer of a lookup.
  mutating func store(_ info: BeaconInfo?, for id: BeaconID, now: NearbyClock.Instant) {
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
  mutating func failed(_ id: BeaconID, now: NearbyClock.Instant) {
    inFlight.remove(id)
    failedUntil[id] = now + retryAfter
    if failedUntil.count > capacity { failedUntil = failedUntil.filter { $0.value > now } }
  }

  /// Drops every answer (lookups running or failing stay as they are): the next sighting of
  /// each id asks again.
  mutating func forgetAnswers() { entries = [:] }

  /// How many ids are cached.
  var count: Int { entries.count }
}
