import Logging
import Strategy
import Tokens

/// Beacon subscriptions (`deviceTypes` `.bleBeacons`).
///
/// The manager scans for beacons with every medium that can while at least one beacon
/// subscription runs (low power when all of them prefer it), follows each beacon heard in
/// its ``BeaconTracker``, asks the resolver once per id and ``Configuration/beaconCacheTTL``
/// which attachments the beacon has (``BeaconInfoCache``), and delivers them as messages:
/// found, then distance and signal changes, then lost when the beacon has been silent for
/// ``Configuration/beaconLostAfter``. The resolver is asked for every type (`*`); each
/// subscription's namespace and type filter its share. Telemetry frames (Eddystone-TLM) heard
/// from a beacon's transmitter go to the resolver with the beacon's next look-up, for its
/// diagnostics (``BeaconTelemetryRelay``). Beacon events are not numbered by the
/// resolver; they are delivered in the order the manager makes them.
extension MessageManager {
  /// The beacon interests of the subscriptions that run now.
  var beaconInterests: [SubscriptionID: BeaconInterest] {
    subscriptions.compactMapValues { $0.isPaused ? nil : $0.beacons }
  }

  /// A medium heard a beacon frame.
  func beaconHeard(_ sighting: BeaconSighting) {
    let interests = beaconInterests
    if let telemetry = BeaconTelemetryRelay.telemetry(of: sighting.frame) {
      // Kept for the resolver's diagnostics, sent with the beacon's next look-up.
      if !isShutDown, !interests.isEmpty {
        beaconTelemetry.heardTelemetry(telemetry, from: sighting.address)
      }
      return
    }
    // Ids no subscription wants (iBeacons with includeIBeacons false, ids outside the
    // filters) are neither followed nor sent to the resolver.
    guard !isShutDown, !interests.isEmpty, let heard = BeaconID(frame: sighting.frame),
      interests.values.contains(where: { $0.accepts(heard) }),
      let id = beaconTracker.record(sighting)
    else { return }
    beaconTelemetry.heard(id, from: sighting.address)
    noteBeaconNamespaces(of: interests)
    let now = ContinuousClock.now
    switch beaconCache.lookup(id, now: now) {
    case .answer(let info, let refresh):
      deliverBeaconEvents(beaconTracker.apply(info, for: id, interests: interests, now: now))
      if refresh { lookUp(id) }
    case .pending:
      break
    case .miss:
      lookUp(id)
    }
    startBeaconSweepIfNeeded()
  }

  /// The resolver is asked for every type of the project (`*`) and for every namespace a
  /// subscription names (`ns/*`: another project's public namespace is read only when named).
  private var beaconNamespacedTypes: [String] {
    ["*"] + askedBeaconNamespaces.sorted().prefix(99).map { "\($0)/*" }
  }

  /// Cached answers lack the namespaces no subscription named when they were asked: when a
  /// subscription names a new one, they are forgotten (asked again when next heard).
  private func noteBeaconNamespaces(of interests: [SubscriptionID: BeaconInterest]) {
    let named = Set(interests.values.map(\.namespace).filter { !$0.isEmpty })
    guard named != askedBeaconNamespaces else { return }
    let grew = !named.isSubset(of: askedBeaconNamespaces)
    askedBeaconNamespaces = named
    if grew { beaconCache.forgetAnswers() }
  }

  /// Queues `id` for the resolver. One request runs at a time; ids heard meanwhile go
  /// together in the next one (a room full of beacons costs a few requests, not one each),
  /// and a lone id is asked at once.
  private func lookUp(_ id: BeaconID) {
    beaconLookupQueue.append(id)
    guard !isLookingUpBeacons else { return }
    isLookingUpBeacons = true
    chores.lookUpBeacons.yield()
  }

  func drainBeaconLookups() async {
    while !beaconLookupQueue.isEmpty, !isShutDown {
      let batch = Array(beaconLookupQueue.prefix(1000))
      beaconLookupQueue.removeFirst(batch.count)
      await resolveBeacons(batch)
    }
    isLookingUpBeacons = false
  }

  /// Asks the resolver what `ids` are, caches the answers and applies them.
  private func resolveBeacons(_ ids: [BeaconID]) async {
    do {
      let observations = ids.map { BeaconObservation(id: $0, telemetry: beaconTelemetry.take($0)) }
      let answers = try await resolver.beaconInfo(
        observations: observations, namespacedTypes: beaconNamespacedTypes, from: credentials)
      guard !isShutDown else { return }
      let now = ContinuousClock.now
      let interests = beaconInterests
      var byID: [BeaconID: BeaconInfo] = [:]
      for answer in answers { byID[answer.observed] = answer }
      for id in ids {
        let info = byID[id]
        beaconCache.store(info, for: id, now: now)
        if info == nil {
          logger.debug("beacon not registered", metadata: ["beacon": "\(id)"])
        }
        deliverBeaconEvents(beaconTracker.apply(info, for: id, interests: interests, now: now))
      }
    } catch let error as ResolverError where error.meansDeviceIsGone {
      for id in ids { beaconCache.failed(id, now: .now) }
      await resolverDropped(because: "\(error)")
    } catch {
      for id in ids { beaconCache.failed(id, now: .now) }
      logger.warning(
        "resolving beacons failed; retrying when they are heard again after \(beaconCache.retryAfter)",
        metadata: ["beacons": "\(ids.count)", "error": "\(error)"])
    }
  }

  /// Hands beacon events to their subscriptions' handlers and streams.
  func deliverBeaconEvents(_ events: [BeaconTracker.Event]) {
    for item in events {
      guard let record = subscriptions[item.subscription] else { continue }
      switch item.event {
      case .found(let message): record.onFound?(message)
      case .lost(let message): record.onLost?(message)
      default: break
      }
      record.continuation.yield(item.event)
    }
  }

  /// Runs the lost check while beacons are followed: every quarter of `beaconLostAfter`, and
  /// at least every second.
  private func startBeaconSweepIfNeeded() {
    guard beaconSweepTask == nil else { return }
    let period = max(min(configuration.beaconLostAfter / 4, .seconds(1)), .milliseconds(10))
    let clock = configuration.clock
    beaconSweepTask = Task { [weak self] in
      while !Task.isCancelled {
        try? await clock.sleep(for: period)
        guard let self, await self.sweepBeacons() else { return }
      }
    }
  }

  /// Loses the attachments of silent beacons; false once nothing is followed any more.
  private func sweepBeacons() -> Bool {
    deliverBeaconEvents(beaconTracker.sweep(now: .now))
    guard beaconTracker.isIdle || isShutDown else { return true }
    beaconSweepTask = nil
    return false
  }

  /// How the mediums should scan for beacons now: `nil` not at all, else whether in low
  /// power (only when every running beacon subscription prefers it).
  private var wantedBeaconScan: Bool? {
    let running = subscriptions.values.filter { !$0.isPaused && $0.beacons != nil }
    guard !running.isEmpty, !isShutDown else { return nil }
    return running.allSatisfy(\.beaconStrategy.lowPowerPreferred)
  }

  /// Starts, changes or stops beacon scanning on every medium that can scan for beacons. One
  /// pass runs at a time; a request during a pass makes it look again.
  func reconcileBeaconScanning() async {
    guard !isReconcilingBeacons else {
      beaconReconcileRequested = true
      return
    }
    isReconcilingBeacons = true
    defer { isReconcilingBeacons = false }
    var again = true
    while again, !isShutDown {
      again = false
      beaconReconcileRequested = false
      let want = wantedBeaconScan
      for index in slots.indices where slots[index].medium.capabilities.contains(.beacons) {
        guard slots[index].beaconScan != want, !isShutDown else { continue }
        let medium = slots[index].medium
        if let lowPower = want {
          do {
            try await medium.startBeaconScanning(lowPower: lowPower)
            slots[index].beaconScan = lowPower
            again = true
          } catch {
            logger.warning(
              "medium cannot scan for beacons",
              metadata: ["medium": "\(medium.name)", "error": "\(error)"])
          }
        } else {
          await medium.stopBeaconScanning()
          slots[index].beaconScan = nil
          again = true
        }
      }
      again = again || beaconReconcileRequested
    }
  }

  /// Expires a subscription the resolver does not know (beacons only) after its TTL; a paused
  /// one gets a new TTL when it resumes, as the resolver's do.
  func startLocalExpiry(_ id: SubscriptionID, ttl: TTL) {
    subscriptions[id]?.expiryTask?.cancel()
    guard let seconds = ttl.seconds else { return }
    let clock = configuration.clock
    subscriptions[id]?.expiryTask = Task { [weak self] in
      try? await clock.sleep(for: .seconds(seconds))
      guard !Task.isCancelled, let self else { return }
      await self.expireLocally(id)
    }
  }

  private func expireLocally(_ id: SubscriptionID) async {
    guard let record = subscriptions.removeValue(forKey: id) else { return }
    logger.debug("subscription expired", metadata: ["subscription": "\(id)"])
    beaconTracker.remove(id)
    record.expiredHandler?()
    record.continuation.yield(.expired)
    record.continuation.finish()
    record.cell.set(.inactive)
    await reconcileBeaconScanning()
  }
}
