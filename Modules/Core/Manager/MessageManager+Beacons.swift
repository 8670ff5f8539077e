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
///
/// What to do is decided by ``BeaconTracking`` (a state machine on the manager's clock); this
/// extension performs it.
extension MessageManager {
  /// The beacon interests of the subscriptions that run now.
  var beaconInterests: [SubscriptionID: BeaconInterest] {
    subscriptions.filter { pausing.isRunning(subscription: $0.key) }.compactMapValues(\.beacons)
  }

  /// A medium heard a beacon frame: timed on the manager's clock as it arrives (mediums
  /// deliver within milliseconds; a test's hand-moved clock then times every frame).
  func beaconHeard(_ sighting: BeaconSighting) {
    beaconFramesHandled += 1
    guard !isShutDown else { return }
    perform(beaconTracking.heard(sighting, interests: beaconInterests, at: clock.now))
  }

  /// Performs what ``BeaconTracking`` decided.
  private func perform(_ actions: [BeaconTracking.Action]) {
    for action in actions {
      switch action {
      case .deliver(let events):
        deliverBeaconEvents(events)
      case .startLookups:
        request(.lookUpBeacons)
      case .startSweeping(let period):
        startBeaconSweep(every: period)
      case .stopSweeping:
        beaconSweep = nil
      }
    }
  }

  /// The look-up runner (a chore): asks the resolver for each request the tracking makes
  /// until its queue is empty.
  func drainBeaconLookups() async {
    while !isShutDown, let lookup = beaconTracking.nextLookup() {
      await resolveBeacons(lookup)
    }
  }

  /// Asks the resolver what a look-up's ids are and applies the answers.
  private func resolveBeacons(_ lookup: BeaconTracking.Lookup) async {
    do {
      let answers = try await resolver.beaconInfo(
        observations: lookup.observations, namespacedTypes: lookup.namespacedTypes,
        from: credentials)
      guard !isShutDown else { return }
      for id in Set(lookup.ids).subtracting(answers.map(\.observed)) {
        logger.debug("beacon not registered", metadata: ["beacon": "\(id)"])
      }
      perform(
        beaconTracking.answered(
          lookup.ids, with: answers, interests: beaconInterests, at: clock.now))
    } catch let error as ResolverError where error.meansDeviceIsGone {
      beaconTracking.lookupFailed(lookup.ids, at: clock.now)
      await resolverDropped(because: "\(error)")
    } catch {
      beaconTracking.lookupFailed(lookup.ids, at: clock.now)
      logger.warning(
        "resolving beacons failed; retrying when they are heard again after \(beaconTracking.cache.retryAfter)",
        metadata: ["beacons": "\(lookup.ids.count)", "error": "\(error)"])
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

  /// Runs the tracking's sweep every `period` (a timer of the manager's loop) until it says to
  /// stop or another sweep replaces this one (its timer, when it next fires, does nothing), or
  /// the manager shuts down.
  private func startBeaconSweep(every period: Duration) {
    beaconSweepsStarted &+= 1
    let number = beaconSweepsStarted
    beaconSweep = number
    schedule(.beaconSweep(number: number, period: period), at: clock.now + period)
  }

  /// The timer of the sweep numbered `number` fired: sweeps, and sleeps `period` again unless
  /// the tracking stopped sweeping or another sweep replaced this one.
  func sweepBeacons(_ number: UInt64, thenEvery period: Duration) {
    guard !isShutDown, beaconSweep == number else { return }
    perform(beaconTracking.sweep(at: clock.now))
    guard beaconSweep == number else { return }
    schedule(.beaconSweep(number: number, period: period), at: clock.now + period)
  }

  /// How the mediums should scan for beacons now: `nil` not at all, else whether in low
  /// power (only when every running beacon subscription prefers it).
  private var wantedBeaconScan: Bool? {
    let running = subscriptions.filter {
      pausing.isRunning(subscription: $0.key) && $0.value.beacons != nil
    }.values
    guard !running.isEmpty, !isShutDown else { return nil }
    return running.allSatisfy(\.beaconStrategy.lowPowerPreferred)
  }

  /// Starts, changes or stops beacon scanning on every medium that can scan for beacons. One
  /// pass runs at a time; a request during a pass makes it look again.
  func reconcileBeaconScanning() async {
    guard beaconScanPass.begin() else { return }
    defer { beaconScanPass.end() }
    var again = true
    while again, !isShutDown {
      again = false
      _ = beaconScanPass.takeRequest()
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
      again = again || beaconScanPass.takeRequest()
    }
  }

  /// Expires a subscription the resolver does not know (beacons only) after its TTL; a paused
  /// one gets a new TTL when it resumes, as the resolver's do.
  func startLocalExpiry(_ id: SubscriptionID, ttl: TTL) {
    stopLocalExpiry(id)
    guard subscriptions[id] != nil, let seconds = ttl.seconds else { return }
    let deadline = clock.now + .seconds(seconds)
    let timer = WorkGroup()
    subscriptions[id]?.expiresAt = deadline
    subscriptions[id]?.expiryTimer = timer
    let timerClock = clock
    timer.start { [weak self] in
      guard (try? await timerClock.sleep(until: deadline)) != nil else { return }
      await self?.expireLocallyIfDue(id)
    }
    // The group closes once the timer is over; a pause or an unsubscribe ends it sooner.
    timer.finish()
  }

  /// Stops a subscription's TTL (it pauses or goes).
  func stopLocalExpiry(_ id: SubscriptionID) {
    subscriptions[id]?.expiryTimer?.end()
    subscriptions[id]?.expiryTimer = nil
    subscriptions[id]?.expiresAt = nil
  }

  private func expireLocallyIfDue(_ id: SubscriptionID) async {
    guard let deadline = subscriptions[id]?.expiresAt, deadline <= clock.now,
      let record = subscriptions.removeValue(forKey: id)
    else { return }
    pausing.removeSubscription(id)
    logger.debug("subscription expired", metadata: ["subscription": "\(id)"])
    beaconTracking.forget(id)
    // Inactive before anyone hears of the expiry.
    record.cell.set(.inactive)
    record.expiredHandler?()
    record.continuation.yield(.expired)
    record.continuation.finish()
    await reconcileBeaconScanning()
  }
}
