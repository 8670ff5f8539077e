/// Work the manager is asked for where nothing can await it: a medium's sighting loop that
/// must go on reading, a synchronous event dispatch, a handle's `deinit`. Each request goes
/// into a stream, and a reader in the manager's task group (ended at shutdown) does the work:
/// no fire-and-forget task per request.
///
/// A flush, a request for directives, a beacon look-up and a beacon-scan reconcile are signals
/// (a burst of requests while one runs leaves one more run); a release names the handle whose
/// last reference went away.
struct ManagerChores: Sendable {
  /// A handle dropped while active: unpublish or unsubscribe it.
  enum Release: Sendable {
    case publication(PublicationID)
    case subscription(SubscriptionID)
  }

  let flushes: AsyncStream<Void>
  let flush: AsyncStream<Void>.Continuation
  let directiveRequests: AsyncStream<Void>
  let requestDirectives: AsyncStream<Void>.Continuation
  let beaconLookups: AsyncStream<Void>
  let lookUpBeacons: AsyncStream<Void>.Continuation
  let beaconReconciles: AsyncStream<Void>
  let reconcileBeacons: AsyncStream<Void>.Continuation
  let releases: AsyncStream<Release>
  let release: AsyncStream<Release>.Continuation

  init() {
    (flushes, flush) = AsyncStream.makeStream(bufferingPolicy: .bufferingNewest(1))
    (directiveRequests, requestDirectives) = AsyncStream.makeStream(
      bufferingPolicy: .bufferingNewest(1))
    (beaconLookups, lookUpBeacons) = AsyncStream.makeStream(bufferingPolicy: .bufferingNewest(1))
    (beaconReconciles, reconcileBeacons) = AsyncStream.makeStream(
      bufferingPolicy: .bufferingNewest(1))
    // One per handle dropped, each at most once: unbounded is bounded by the handles made.
    (releases, release) = AsyncStream.makeStream(bufferingPolicy: .unbounded)
  }

  /// Ends every stream (the manager's readers of them end).
  func finish() {
    flush.finish()
    requestDirectives.finish()
    lookUpBeacons.finish()
    reconcileBeacons.finish()
    release.finish()
  }
}

extension MessageManager {
  /// Starts the readers that do the chores, one per kind so that a slow beacon look-up never
  /// holds up a flush of sightings. They hold the manager weakly and end when it shuts down.
  func startChores() {
    let chores = chores
    start { [weak self] in
      for await _ in chores.flushes { await self?.flushSightings() }
    }
    start { [weak self] in
      for await _ in chores.directiveRequests { await self?.requestDirectives() }
    }
    start { [weak self] in
      for await _ in chores.beaconLookups { await self?.drainBeaconLookups() }
    }
    start { [weak self] in
      for await _ in chores.beaconReconciles { await self?.reconcileBeaconScanning() }
    }
    start { [weak self] in
      for await release in chores.releases {
        switch release {
        case .publication(let id): await self?.unpublish(id)
        case .subscription(let id): await self?.unsubscribe(id)
        }
      }
    }
  }
}
