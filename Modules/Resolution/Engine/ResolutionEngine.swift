@_spi(Resolver) public import Core
public import Foundation
import Strategy
import Tokens

/// An event addressed to a device, as the engine produces it, with its place in that device's
/// event sequence (assigned when the engine returns it; 0 before).
@_spi(Resolver) public struct DeviceEvent: Sendable, Hashable {
  public var device: DeviceID
  public var sequence: UInt64
  public var event: ResolverEvent
  public init(device: DeviceID, sequence: UInt64 = 0, event: ResolverEvent) {
    self.device = device
    self.sequence = sequence
    self.event = event
  }

  /// The event as the device receives it.
  public var sequenced: SequencedEvent { SequencedEvent(sequence: sequence, event: event) }
}

/// The matching engine of contract §3: devices and their tokens, publications and
/// subscriptions, sightings in both directions, found once until lost, lost after
/// ``ResolutionConfiguration/lostAfter``, unpublish, and TTL expiry.
///
/// Every call takes the current time, so tests drive it with any clock. It is not
/// thread-safe: one owner (an actor) calls it. The rule for delivering publication P (on
/// device A) to subscription S (on device B): same project, S's namespace/type filters accept
/// P's message, A ≠ B, and on some medium M allowed by both strategies there is a fresh
/// sighting either of A by B (S scans M, P broadcasts M) or of B by A (P scans M, S broadcasts
/// M).
public final class ResolutionEngine<Store: ResolutionStore> {
  public let store: Store
  public let configuration: ResolutionConfiguration
  private let lostAfter: TimeInterval
  private let tokenLifetime: TimeInterval
  private let tokenGrace: TimeInterval

  /// An engine over `store`. The configuration must be valid (see
  /// ``ResolutionConfiguration/validate()``); the in-process resolver checks it first.
  public init(store: Store, configuration: ResolutionConfiguration = .init()) {
    precondition((try? configuration.validate()) != nil, "invalid \(configuration)")
    self.store = store
    self.configuration = configuration
    self.lostAfter = configuration.lostAfter.seconds
    self.tokenLifetime = configuration.tokenLifetime.seconds
    self.tokenGrace = configuration.tokenGrace.seconds
  }

  // MARK: Devices

  /// Registers a new device in `project` with a fresh secret and token.
  @_spi(Resolver) public func register(project: String, now: Date) throws -> DeviceCredentials {
    let id = DeviceID.random()
    let secret = Token.random().hex + Token.random().hex
    let token = Token.random()
    let expiresAt = now.addingTimeInterval(tokenLifetime)
    try store.devices.saveDevice(
      DeviceRecord(
        id: id, project: project, secretDigest: DeviceRecord.digest(ofSecret: secret),
        token: token, tokenExpiresAt: expiresAt, lastReportAt: now))
    try bind(token, to: id, expiresAt: expiresAt)
    return DeviceCredentials(id: id, secret: secret)
  }

  /// The device the credentials belong to.
  /// - Throws: ``ResolverError/unknownDevice(_:)`` or ``ResolverError/wrongSecret(_:)``.
  @_spi(Resolver) public func authenticate(_ credentials: DeviceCredentials) throws -> DeviceRecord
  {
    try DeviceRecord.authenticated(try store.devices.device(credentials.id), as: credentials)
  }

  /// Removes a device with everything it published and subscribed to; subscribers that had
  /// found its messages get `lost`.
  @_spi(Resolver) public func unregister(_ credentials: DeviceCredentials, now: Date) throws
    -> [DeviceEvent]
  {
    try remove(try authenticate(credentials), now: now)
  }

  /// Removes the device if it has not reported for ``ResolutionConfiguration/deviceExpiry``
  /// (checked again here: it may have reported since it was listed), as ``unregister(_:now:)``
  /// does; no events if it is gone or reported since.
  @_spi(Resolver) public func expire(_ id: DeviceID, now: Date) throws -> [DeviceEvent] {
    guard let expiry = configuration.deviceExpiry, let device = try store.devices.device(id),
      device.lastReportAt <= now.addingTimeInterval(-expiry.seconds)
    else { return [] }
    return try remove(device, now: now)
  }

  /// The devices silent for longer than ``ResolutionConfiguration/deviceExpiry`` at `now`,
  /// up to `limit` (none when devices do not expire).
  @_spi(Resolver) public func silentDevices(now: Date, limit: Int) throws -> [DeviceID] {
    guard let expiry = configuration.deviceExpiry else { return [] }
    return try store.devices.silentDevices(
      before: now.addingTimeInterval(-expiry.seconds), limit: limit)
  }

  private func remove(_ device: DeviceRecord, now: Date) throws -> [DeviceEvent] {
    var outbox: [DeviceEvent] = []
    for publication in try store.handles.publications(on: device.id) {
      try removePublication(publication.id, now: now, outbox: &outbox)
    }
    for subscription in try store.handles.subscriptions(on: device.id) {
      try removeSubscription(subscription.id)
    }
    for neighbor in try store.proximity.neighbors(of: device.id) {
      for (_, medium) in DiscoveryMediums.named {
        try store.proximity.removeSighting(
          ProximityKey(hearer: device.id, heard: neighbor, medium: medium))
        try store.proximity.removeSighting(
          ProximityKey(hearer: neighbor, heard: device.id, medium: medium))
      }
    }
    // Older tokens still in their grace period retire on their deadlines; sightings of them
    // are ignored because the device is gone.
    try store.devices.unbind(device.token)
    let events = try seal(outbox)
    try store.devices.removeDevice(device.id)
    return events
  }

  // MARK: Reports

  /// Applies a report: unpublish, unsubscribe, publish, subscribe, then sightings; rotates the
  /// token when due; answers the directives and the events for the reporting device.
  /// Events for other devices are returned in `deviceEvents`.
  ///
  /// - Parameter sweeping: also handle every deadline due by `now` (true: one owner, as in
  ///   process; a store whose transactions run concurrently passes false and leaves deadlines
  ///   to ``handle(_:now:)``, because a due deadline may concern devices this report did not
  ///   lock).
  /// - Throws: ``ResolverError`` for bad credentials or an invalid report (the text names the
  ///   field and the limit); nothing is applied then.
  @_spi(Resolver) public func report(
    _ report: Report, from credentials: DeviceCredentials, now: Date, sweeping: Bool = true
  )
    throws -> (answer: ReportAnswer, deviceEvents: [DeviceEvent])
  {
    var device = try authenticate(credentials)
    if device.holdsPlainSecret {
      // Kept before digests: from now on only the digest is.
      device.secretDigest = DeviceRecord.digest(ofSecret: credentials.secret)
      try store.devices.saveDevice(device)
    }
    try validate(report, device: device)
    var outbox: [DeviceEvent] = []
    for id in report.unpublish where try store.handles.publication(id)?.device == device.id {
      try removePublication(id, now: now, outbox: &outbox)
    }
    for id in report.unsubscribe where try store.handles.subscription(id)?.device == device.id {
      try removeSubscription(id)
    }
    for spec in report.publish where try store.handles.publication(spec.id) == nil {
      try addPublication(spec, device: device, now: now, outbox: &outbox)
    }
    for spec in report.subscribe where try store.handles.subscription(spec.id) == nil {
      try addSubscription(spec, device: device, now: now, outbox: &outbox)
    }
    var newNeighbors = device.newNeighbors
    for sighting in report.sightings {
      try record(sighting, by: device, newNeighbors: &newNeighbors, now: now, outbox: &outbox)
    }
    if sweeping { try sweepDue(now: now, outbox: &outbox) }

    device = try store.devices.device(device.id) ?? device
    device.newNeighbors = newNeighbors
    device.lastReportAt = now
    if now >= device.tokenExpiresAt {
      device.token = Token.random()
      device.tokenExpiresAt = now.addingTimeInterval(tokenLifetime)
      try bind(device.token, to: device.id, expiresAt: device.tokenExpiresAt)
    }
    device.revision += 1
    try store.devices.saveDevice(device)
    let directives = device.directives(now: now)
    var mine: [SequencedEvent] = []
    var others: [DeviceEvent] = []
    for deviceEvent in try seal(outbox) {
      if deviceEvent.device == device.id {
        mine.append(deviceEvent.sequenced)
      } else {
        others.append(deviceEvent)
      }
    }
    return (ReportAnswer(directives: directives, events: mine), others)
  }

  /// Numbers the events per device, in order; events for devices that are gone are dropped.
  private func seal(_ outbox: [DeviceEvent]) throws -> [DeviceEvent] {
    guard !outbox.isEmpty else { return [] }
    var records: [DeviceID: DeviceRecord] = [:]
    var sealed: [DeviceEvent] = []
    sealed.reserveCapacity(outbox.count)
    for var item in outbox {
      guard var record = try records[item.device] ?? store.devices.device(item.device) else {
        continue
      }
      record.lastEventSequence += 1
      item.sequence = record.lastEventSequence
      records[item.device] = record
      sealed.append(item)
    }
    for record in records.values { try store.devices.saveDevice(record) }
    return sealed
  }

  private func validate(_ report: Report, device: DeviceRecord) throws {
    for spec in report.publish {
      try invalidReportOnFailure {
        try spec.message.validate()
        try spec.strategy.validate()
      }
      if let existing = try store.handles.publication(spec.id) {
        guard existing.device == device.id else {
          throw ResolverError.invalidReport("publication id \(spec.id) belongs to another device")
        }
        guard existing.message == spec.message, existing.strategy == spec.strategy else {
          throw ResolverError.invalidReport(
            "publication id \(spec.id) exists with another message or strategy; use a new id")
        }
      }
    }
    for spec in report.subscribe {
      try invalidReportOnFailure {
        try spec.strategy.validate()
        try Message.validate(namespace: spec.namespace)
        if let type = spec.type { try Message.validate(type: type) }
      }
      if let existing = try store.handles.subscription(spec.id) {
        guard existing.device == device.id else {
          throw ResolverError.invalidReport(
            "subscription id \(spec.id) belongs to another device")
        }
        guard existing.namespace == spec.namespace, existing.type == spec.type,
          existing.strategy == spec.strategy, existing.deviceTypes == spec.deviceTypes
        else {
          throw ResolverError.invalidReport(
            "subscription id \(spec.id) exists with other filters or strategy; use a new id")
        }
      }
    }
    try checkHandleLimits(report, device: device)
    for sighting in report.sightings where !sighting.hasOneKnownMedium {
      throw ResolverError.invalidReport(
        "a sighting's medium must be one of \(DiscoveryMediums.named.map(\.name)), "
          + "got \(sighting.medium)")
    }
  }

  /// Refuses a report that would leave the device more publications or subscriptions than
  /// ``ResolutionConfiguration/maximumHandlesPerDevice`` (the store is asked only when the
  /// report adds some).
  private func checkHandleLimits(_ report: Report, device: DeviceRecord) throws {
    if !report.publish.isEmpty {
      let (removed, added) = (Set(report.unpublish), Set(report.publish.map(\.id)))
      try checkLimit(
        "publish", "publications",
        tally: try store.handles.publicationTally(on: device.id, among: removed.union(added)),
        removed: removed, added: added, hint: "unpublish")
    }
    if !report.subscribe.isEmpty {
      let (removed, added) = (Set(report.unsubscribe), Set(report.subscribe.map(\.id)))
      try checkLimit(
        "subscribe", "subscriptions",
        tally: try store.handles.subscriptionTally(on: device.id, among: removed.union(added)),
        removed: removed, added: added, hint: "unsubscribe")
    }
  }

  private func checkLimit<ID: Hashable>(
    _ field: String, _ what: String, tally: HandleTally<ID>, removed: Set<ID>, added: Set<ID>,
    hint: String
  ) throws {
    let limit = configuration.maximumHandlesPerDevice
    let after = tally.after(removing: removed, adding: added)
    guard after <= limit || after <= tally.count else {
      throw ResolverError.invalidReport(
        "\(field): the device would keep \(after) \(what); the limit is \(limit) "
          + "(\(hint) some first)")
    }
  }

  /// Runs value checks (message and strategy limits), reporting their failure as an invalid
  /// report; storage errors never pass through here.
  private func invalidReportOnFailure(_ check: () throws -> Void) throws(ResolverError) {
    do { try check() } catch { throw .invalidReport("\(error)") }
  }

  /// Binds `token` until its lifetime and grace are over; the binding is kept a sighting
  /// window longer, for sightings heard before then that arrive later.
  private func bind(_ token: Token, to device: DeviceID, expiresAt: Date) throws {
    let until = expiresAt.addingTimeInterval(tokenGrace)
    try store.devices.bind(token, to: device, until: until)
    try store.deadlines.schedule(
      Deadline(
        at: until.addingTimeInterval(configuration.sightingWindow.seconds),
        kind: .tokenRetirement(token)))
  }

  // MARK: Publications and subscriptions

  private func expiry(of strategy: Strategy, now: Date) -> Date? {
    strategy.ttl.seconds.map { now.addingTimeInterval($0) }
  }

  private func addPublication(
    _ spec: PublicationSpec, device: DeviceRecord, now: Date, outbox: inout [DeviceEvent]
  ) throws {
    let record = PublicationRecord(
      id: spec.id, device: device.id, project: device.project, message: spec.message,
      strategy: spec.strategy, expiresAt: expiry(of: spec.strategy, now: now))
    try store.handles.savePublication(record)
    try updateUsage(of: device.id, with: spec.strategy, sign: 1)
    if let expiresAt = record.expiresAt {
      try store.deadlines.schedule(Deadline(at: expiresAt, kind: .publicationExpiry(record.id)))
    }
    for neighbor in try store.proximity.neighbors(of: device.id) {
      for subscription in try store.handles.subscriptions(on: neighbor, accepting: record) {
        try deliverIfQualified(record, to: subscription, now: now, outbox: &outbox)
      }
    }
  }

  private func addSubscription(
    _ spec: SubscriptionSpec, device: DeviceRecord, now: Date, outbox: inout [DeviceEvent]
  ) throws {
    let record = SubscriptionRecord(
      id: spec.id, device: device.id, project: device.project, namespace: spec.namespace,
      type: spec.type, strategy: spec.strategy, deviceTypes: spec.deviceTypes,
      expiresAt: expiry(of: spec.strategy, now: now))
    try store.handles.saveSubscription(record)
    try updateUsage(of: device.id, with: spec.strategy, sign: 1)
    if let expiresAt = record.expiresAt {
      try store.deadlines.schedule(Deadline(at: expiresAt, kind: .subscriptionExpiry(record.id)))
    }
    for neighbor in try store.proximity.neighbors(of: device.id) {
      for publication in try store.handles.publications(on: neighbor, acceptedBy: record) {
        try deliverIfQualified(publication, to: record, now: now, outbox: &outbox)
      }
    }
  }

  /// Removes a publication; subscribers that had found its message (from no other
  /// publication) get `lost`.
  private func removePublication(_ id: PublicationID, now: Date, outbox: inout [DeviceEvent]) throws
  {
    guard let record = try store.handles.publication(id) else { return }
    for subscriptionID in try store.deliveries.deliveries(of: id) {
      guard let subscription = try store.handles.subscription(subscriptionID) else { continue }
      try undeliver(record, from: subscription, outbox: &outbox)
    }
    _ = try store.handles.removePublication(id)
    try updateUsage(of: record.device, with: record.strategy, sign: -1)
  }

  /// Removes a subscription and its deliveries; its owner asked for it or it expired, so no
  /// `lost` events are sent.
  private func removeSubscription(_ id: SubscriptionID) throws {
    guard let record = try store.handles.removeSubscription(id) else { return }
    for (publication, key) in try store.deliveries.deliveries(to: id) {
      _ = try store.deliveries.removeDelivery(
        subscription: id, publication: publication, message: key)
    }
    try updateUsage(of: record.device, with: record.strategy, sign: -1)
  }

  private func updateUsage(of id: DeviceID, with strategy: Strategy, sign: Int) throws {
    guard var device = try store.devices.device(id) else { return }
    device.usage.apply(strategy, sign: sign)
    try store.devices.saveDevice(device)
  }

  // MARK: Sightings and matching

  /// Records one sighting, if it counts: heard within the sighting window (by its time), of
  /// a token bound to another device of the same project at that time, and, when it starts a
  /// nearness, within the hearer's budget of new neighbours for the minute.
  private func record(
    _ sighting: Sighting, by hearer: DeviceRecord, newNeighbors: inout NewNeighborWindow,
    now: Date, outbox: inout [DeviceEvent]
  ) throws {
    // Heard too long ago (a recording played back, or a report kept too long), or in the
    // future: ignored.
    let heardAt = sighting.time
    guard configuration.counts(heardAt: heardAt, now: now) else { return }
    // A token of another project names nothing here: no row about that device is written,
    // and nothing tells the reporter it exists.
    guard let heard = try store.devices.device(heard: sighting.token, at: heardAt),
      heard != hearer.id,
      try store.devices.device(heard)?.project == hearer.project
    else { return }
    let key = ProximityKey(hearer: hearer.id, heard: heard, medium: sighting.medium)
    let previous = try store.proximity.lastSighting(key)
    // A sighting that was already fresh cannot create a delivery: handles added since were
    // matched against it when they were added.
    let startsNearness = previous.map { now.timeIntervalSince($0) >= lostAfter } ?? true
    if startsNearness,
      !newNeighbors.admit(now: now, limit: configuration.maximumNewNeighborsPerMinute)
    {
      return
    }
    _ = try store.proximity.recordSighting(key, at: now)
    if previous == nil {
      try store.deadlines.schedule(
        Deadline(at: now.addingTimeInterval(lostAfter), kind: .proximity(key)))
    }
    guard startsNearness else { return }
    try match(hearer.id, heard, now: now, outbox: &outbox)
  }

  /// Delivers every qualifying pair between the two devices' handles.
  private func match(_ a: DeviceID, _ b: DeviceID, now: Date, outbox: inout [DeviceEvent]) throws {
    try match(publisher: a, subscriber: b, now: now, outbox: &outbox)
    try match(publisher: b, subscriber: a, now: now, outbox: &outbox)
  }

  private func match(
    publisher: DeviceID, subscriber: DeviceID, now: Date, outbox: inout [DeviceEvent]
  ) throws {
    for publication in try store.handles.publications(on: publisher) {
      for subscription in try store.handles.subscriptions(on: subscriber, accepting: publication) {
        try deliverIfQualified(publication, to: subscription, now: now, outbox: &outbox)
      }
    }
  }

  private func deliverIfQualified(
    _ publication: PublicationRecord, to subscription: SubscriptionRecord, now: Date,
    outbox: inout [DeviceEvent]
  ) throws {
    guard publication.project == subscription.project,
      subscription.deviceTypes.contains(.nearbyDevices),
      subscription.accepts(publication),
      try qualifies(publication, subscription, now: now)
    else { return }
    if try store.deliveries.addDelivery(
      subscription: subscription.id, publication: publication.id, message: publication.key)
    {
      outbox.append(
        DeviceEvent(
          device: subscription.device, event: .found(subscription.id, publication.message)))
    }
  }

  private func undeliver(
    _ publication: PublicationRecord, from subscription: SubscriptionRecord,
    outbox: inout [DeviceEvent]
  ) throws {
    if try store.deliveries.removeDelivery(
      subscription: subscription.id, publication: publication.id, message: publication.key)
    {
      outbox.append(
        DeviceEvent(
          device: subscription.device, event: .lost(subscription.id, publication.message)))
    }
  }

  /// Whether a fresh sighting connects the two handles on a medium both allow, heard by a side
  /// that scans from a side that broadcasts.
  func qualifies(
    _ publication: PublicationRecord, _ subscription: SubscriptionRecord, now: Date
  ) throws -> Bool {
    let (p, s) = (publication.strategy, subscription.strategy)
    guard publication.device != subscription.device else { return false }
    let shared = p.effectiveMediums.intersection(s.effectiveMediums)
    for (_, medium) in DiscoveryMediums.named where shared.contains(medium) {
      if s.scans(on: medium), p.broadcasts(on: medium),
        try isFresh(
          ProximityKey(hearer: subscription.device, heard: publication.device, medium: medium), now)
      {
        return true
      }
      if p.scans(on: medium), s.broadcasts(on: medium),
        try isFresh(
          ProximityKey(hearer: publication.device, heard: subscription.device, medium: medium), now)
      {
        return true
      }
    }
    return false
  }

  private func isFresh(_ key: ProximityKey, _ now: Date) throws -> Bool {
    guard let last = try store.proximity.lastSighting(key) else { return false }
    return now.timeIntervalSince(last) < lostAfter
  }

  // MARK: Time

  /// When `sweep(now:)` (of the `Resolver` SPI) next has work to do.
  public func nextDeadline() throws -> Date? { try store.deadlines.nextDeadline() }

  /// Handles everything due by `now`: stale sightings (lost), expired publications (lost for
  /// subscribers, `publicationExpired` for the owner), expired subscriptions, and retired
  /// tokens.
  @_spi(Resolver) public func sweep(now: Date) throws -> [DeviceEvent] {
    var outbox: [DeviceEvent] = []
    try sweepDue(now: now, outbox: &outbox)
    return try seal(outbox)
  }

  /// Numbers events another engine decided for devices of this one (nearby-server's peer
  /// bridge: a device's `found` and `lost` for peers the server never sees) in each device's
  /// sequence, as this engine's own are; events for devices that are gone are dropped.
  @_spi(Resolver) public func sequence(_ events: [DeviceEvent]) throws -> [DeviceEvent] {
    try seal(events)
  }

  /// Handles one deadline the caller has taken from the store (``DeadlineStore/popDeadline(dueAt:)``)
  /// and returns the events it caused, sequenced. Lets a server whose transactions run
  /// concurrently handle each deadline in a transaction of its own, with exactly the devices
  /// it concerns locked.
  @_spi(Resolver) public func handle(_ deadline: Deadline, now: Date) throws -> [DeviceEvent] {
    var outbox: [DeviceEvent] = []
    try handle(deadline, now: now, outbox: &outbox)
    return try seal(outbox)
  }

  private func sweepDue(now: Date, outbox: inout [DeviceEvent]) throws {
    while let deadline = try store.deadlines.popDeadline(dueAt: now) {
      try handle(deadline, now: now, outbox: &outbox)
    }
  }

  private func handle(_ deadline: Deadline, now: Date, outbox: inout [DeviceEvent]) throws {
    switch deadline.kind {
    case .proximity(let key):
      guard let last = try store.proximity.lastSighting(key) else { return }
      let staleAt = last.addingTimeInterval(lostAfter)
      if staleAt > now {
        try store.deadlines.schedule(Deadline(at: staleAt, kind: .proximity(key)))
        return
      }
      try store.proximity.removeSighting(key)
      try recheck(key.hearer, key.heard, now: now, outbox: &outbox)
    case .publicationExpiry(let id):
      guard let record = try store.handles.publication(id), let expiresAt = record.expiresAt,
        expiresAt <= now
      else { return }
      try removePublication(id, now: now, outbox: &outbox)
      outbox.append(DeviceEvent(device: record.device, event: .publicationExpired(id)))
    case .subscriptionExpiry(let id):
      guard let record = try store.handles.subscription(id), let expiresAt = record.expiresAt,
        expiresAt <= now
      else { return }
      try removeSubscription(id)
      outbox.append(DeviceEvent(device: record.device, event: .subscriptionExpired(id)))
    case .tokenRetirement(let token):
      if let until = try store.devices.binding(of: token),
        until <= configuration.earliestHeard(now: now)
      {
        try store.devices.unbind(token)
      }
    }
  }

  /// Takes back deliveries between the two devices that no longer qualify.
  private func recheck(_ a: DeviceID, _ b: DeviceID, now: Date, outbox: inout [DeviceEvent]) throws
  {
    try recheck(publisher: a, subscriber: b, now: now, outbox: &outbox)
    try recheck(publisher: b, subscriber: a, now: now, outbox: &outbox)
  }

  private func recheck(
    publisher: DeviceID, subscriber: DeviceID, now: Date, outbox: inout [DeviceEvent]
  ) throws {
    for publication in try store.handles.publications(on: publisher) {
      for subscriptionID in try store.deliveries.deliveries(of: publication.id) {
        guard let subscription = try store.handles.subscription(subscriptionID),
          subscription.device == subscriber,
          try !qualifies(publication, subscription, now: now)
        else { continue }
        try undeliver(publication, from: subscription, outbox: &outbox)
      }
    }
  }
}

extension Sighting {
  /// Whether the sighting names a single medium, one the engine knows: a report with any
  /// other sighting is refused as invalid.
  public var hasOneKnownMedium: Bool {
    medium.rawValue.nonzeroBitCount == 1 && medium.unknown.isEmpty
  }
}
