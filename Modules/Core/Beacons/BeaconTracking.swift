import Tokens

/// What a manager decides for its beacon subscriptions, apart from doing it: which frames to
/// follow, which ids to ask the resolver about and when, what its answers mean for each
/// subscription, and when a silent beacon is lost.
///
/// A state machine in the manager's time (``NearbyClock``): each call takes an event (a frame
/// heard, an answer, a failed look-up, a sweep) with its instant and the interests of the
/// subscriptions that run now, and returns the ``Action``s to perform; the manager's actor
/// performs them (delivers events, runs the look-ups against the resolver, runs the sweep
/// timer) and never decides itself. It owns the ``BeaconTracker`` (found attachments,
/// signals), the ``BeaconInfoCache`` (the resolver's answers), the ``BeaconTelemetryRelay``
/// and the queue of ids to ask about.
///
/// **Look-ups.** One runs at a time. Ids heard meanwhile wait in the queue and go together in
/// the next (up to ``lookupBatchLimit``): a room full of beacons costs a few requests, not one
/// each. ``Action/startLookups`` asks the performer to start a runner that calls
/// ``nextLookup()`` until it returns `nil`, reporting each with ``answered(_:with:interests:at:)``
/// or ``lookupFailed(_:at:)``.
///
/// **Sweeps.** While anything is followed, ``sweep(at:)`` is to be called every
/// ``sweepPeriod`` (``Action/startSweeping(every:)``); it loses the attachments of beacons
/// silent for `lostAfter` and returns ``Action/stopSweeping`` once nothing is followed.
struct BeaconTracking {
  typealias Instant = NearbyClock.Instant

  /// What the performer does.
  enum Action: Equatable {
    /// Hand these events to their subscriptions, in order.
    case deliver([BeaconTracker.Event])
    /// Start a look-up runner (none runs now): call ``nextLookup()`` until it returns `nil`.
    case startLookups
    /// Call ``sweep(at:)`` every `period` until it answers ``stopSweeping``.
    case startSweeping(every: Duration)
    /// Nothing is followed any more: stop calling ``sweep(at:)``.
    case stopSweeping
  }

  /// One request to the resolver.
  struct Lookup: Equatable {
    /// The ids, each with the telemetry its transmitter sent since it was last asked.
    var observations: [BeaconObservation]
    /// `*` (every type of the project) and `ns/*` for each namespace a subscription names
    /// (another project's public namespace is read only when named).
    var namespacedTypes: [String]

    var ids: [BeaconID] { observations.map(\.id) }
  }

  /// The most ids in one look-up.
  static let lookupBatchLimit = 1000
  /// The most namespaces named in one look-up besides `*`.
  static let namedNamespaceLimit = 99

  /// How often a sweep runs while beacons are followed: a quarter of `lostAfter`, at least
  /// every second and at most every 10 ms.
  let sweepPeriod: Duration
  private(set) var tracker: BeaconTracker
  private(set) var cache: BeaconInfoCache
  private var telemetry = BeaconTelemetryRelay()
  private var queue: [BeaconID] = []
  private var isLookingUp = false
  private var isSweeping = false
  /// The namespaces subscriptions named when the cached answers were asked.
  private var askedNamespaces: Set<String> = []

  init(settings: BeaconTracker.Settings, cacheTTL: Duration) {
    tracker = BeaconTracker(settings: settings)
    cache = BeaconInfoCache(ttl: cacheTTL)
    sweepPeriod = max(min(settings.lostAfter / 4, .seconds(1)), .milliseconds(10))
  }

  /// A medium heard `sighting` at `time`. Frames no running subscription accepts (iBeacons
  /// with `includeIBeacons` false, ids outside the filters) are neither followed nor looked
  /// up; telemetry frames are held for their beacon's next look-up.
  mutating func heard(
    _ sighting: BeaconSighting, interests: [SubscriptionID: BeaconInterest], at time: Instant
  ) -> [Action] {
    guard !interests.isEmpty else { return [] }
    if let frame = BeaconTelemetryRelay.telemetry(of: sighting.frame) {
      telemetry.heardTelemetry(frame, from: sighting.address)
      return []
    }
    guard let heard = BeaconID(frame: sighting.frame),
      interests.values.contains(where: { $0.accepts(heard) }),
      let id = tracker.record(sighting, at: time)
    else { return [] }
    telemetry.heard(id, from: sighting.address)
    noteNamespaces(of: interests)
    var actions: [Action] = []
    switch cache.lookup(id, now: time) {
    case .answer(let info, let refresh):
      let events = tracker.apply(info, for: id, interests: interests, now: time)
      if !events.isEmpty { actions.append(.deliver(events)) }
      if refresh { enqueue(id, into: &actions) }
    case .pending:
      break
    case .miss:
      enqueue(id, into: &actions)
    }
    if !isSweeping {
      isSweeping = true
      actions.append(.startSweeping(every: sweepPeriod))
    }
    return actions
  }

  /// The next request for the runner, its telemetry taken; `nil` when the queue is empty (the
  /// runner ends, and the next id queued asks for a new one).
  mutating func nextLookup() -> Lookup? {
    guard !queue.isEmpty else {
      isLookingUp = false
      return nil
    }
    let ids = Array(queue.prefix(Self.lookupBatchLimit))
    queue.removeFirst(ids.count)
    let named = askedNamespaces.sorted().prefix(Self.namedNamespaceLimit).map { "\($0)/*" }
    return Lookup(
      observations: ids.map { BeaconObservation(id: $0, telemetry: telemetry.take($0)) },
      namespacedTypes: ["*"] + named)
  }

  /// The resolver answered a look-up of `ids` at `time` (`answers`: the ids it knows; the
  /// others are unknown beacons, cached for a fifth of the TTL).
  mutating func answered(
    _ ids: [BeaconID], with answers: [BeaconInfo], interests: [SubscriptionID: BeaconInterest],
    at time: Instant
  ) -> [Action] {
    var byID: [BeaconID: BeaconInfo] = [:]
    for answer in answers { byID[answer.observed] = answer }
    var events: [BeaconTracker.Event] = []
    for id in ids {
      let info = byID[id]
      cache.store(info, for: id, now: time)
      events += tracker.apply(info, for: id, interests: interests, now: time)
    }
    return events.isEmpty ? [] : [.deliver(events)]
  }

  /// A look-up of `ids` failed at `time`: they are asked again when heard after the cache's
  /// `retryAfter`; found attachments stay found meanwhile (while their beacons are heard).
  mutating func lookupFailed(_ ids: [BeaconID], at time: Instant) {
    for id in ids { cache.failed(id, now: time) }
  }

  /// Loses the attachments of the beacons silent for `lostAfter` at `time`.
  mutating func sweep(at time: Instant) -> [Action] {
    let events = tracker.sweep(now: time)
    var actions: [Action] = events.isEmpty ? [] : [.deliver(events)]
    if tracker.isIdle, isSweeping {
      isSweeping = false
      actions.append(.stopSweeping)
    }
    return actions
  }

  /// A subscription stopped, paused or expired: its found attachments are forgotten (no
  /// events).
  mutating func forget(_ subscription: SubscriptionID) { tracker.remove(subscription) }

  private mutating func enqueue(_ id: BeaconID, into actions: inout [Action]) {
    queue.append(id)
    guard !isLookingUp else { return }
    isLookingUp = true
    actions.append(.startLookups)
  }

  /// Cached answers lack the namespaces no subscription named when they were asked: when a
  /// subscription names a new one, they are forgotten (asked again when next heard).
  private mutating func noteNamespaces(of interests: [SubscriptionID: BeaconInterest]) {
    let named = Set(interests.values.map(\.namespace).filter { !$0.isEmpty })
    guard named != askedNamespaces else { return }
    let grew = !named.isSubset(of: askedNamespaces)
    askedNamespaces = named
    if grew { cache.forgetAnswers() }
  }
}
