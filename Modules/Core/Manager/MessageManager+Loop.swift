extension MessageManager {
  /// What a manager released without ``shutdown()`` must still stop once its work has ended
  /// (a `deinit` cannot await): the `afterwards` step of its ``WorkGroup``.
  struct Teardown: Sendable {
    let mediums: [any Medium]
    let resolver: any Resolver
    let credentials: DeviceCredentials
    /// Yields once when the manager is released without ``shutdown()``; finishes empty on a
    /// shutdown.
    let released: AsyncStream<Void>

    /// Stops the mediums and unregisters the device if the manager was released; each call
    /// is bounded by its own timeout.
    func run() async {
      for await _ in released {
        for medium in mediums { await medium.shutdown() }
        try? await resolver.unregister(credentials)
        return
      }
    }
  }

  /// Runs `piece` in the manager's work group (its readers, chores and timers); nothing runs
  /// once the manager has shut down.
  nonisolated func start(_ piece: @escaping WorkGroup.Work) {
    work.start(piece)
  }
}

extension MessageManager {
  /// Starts the manager's loop in its work group: it hands what ``inputs`` carries (written
  /// off the actor) to ``accept(_:)``, one at a time. The loop holds the manager weakly and
  /// ends when the manager shuts down (its work is cancelled) or is released.
  func startLoop() {
    let inputs = inputs
    start { [weak self] in
      for await input in inputs.stream {
        guard let self else { return }
        await self.accept(input)
        inputs.taken()
      }
    }
  }

  /// Hands one input to the manager's ``ManagerLoopStateMachine`` and performs its answer:
  /// what a source said is handled at once; each run, release and timer is a task of the
  /// manager's work group, which holds the manager weakly and hands what it learns (a run
  /// ended, a deadline came) back here.
  func accept(_ input: ManagerLoopStateMachine.Input) {
    guard let action = loop.handle(input) else { return }
    switch action {
    case .run(let chore):
      start { [weak self] in
        await self?.run(chore)
        await self?.accept(.ended(chore))
      }
    case .release(let release):
      start { [weak self] in
        switch release {
        case .publication(let id): await self?.unpublish(id)
        case .subscription(let id): await self?.unsubscribe(id)
        }
        await self?.accept(.taskEnded)
      }
    case .sleep(let deadline, let timer):
      let clock = clock
      start { [weak self] in
        guard (try? await clock.sleep(until: deadline)) != nil else { return }
        await self?.accept(.fired(timer))
      }
    case .fire(let timer):
      start { [weak self] in
        await self?.fire(timer)
        await self?.accept(.taskEnded)
      }
    case .handle(.resolverEventsEnded):
      // The manager shuts down, which awaits the mediums and the resolver: `accept` never
      // awaits, so it is a task of its own.
      start { [weak self] in
        await self?.resolverDropped(because: "the resolver closed this device's event stream")
      }
    case .handle(let occurrence):
      handle(occurrence)
    }
  }

  /// Whether the manager, while running, has no decided work left at its clock's present
  /// instant: what its loop was written has been accepted, no chore, release or fire runs, and
  /// no timer is due (``ManagerLoopStateMachine/isIdle(at:)``). Not counted: frames and events
  /// its sources have not handed in yet, a beacon subscription's own expiry timer, a pass of a
  /// reconcile called directly by a publish or subscribe, a permission request. Never true
  /// again once shut down.
  var isIdle: Bool { inputs.pending == 0 && loop.isIdle(at: clock.now) }

  /// Asks for a run of `chore` (from the manager's own code).
  func request(_ chore: ManagerLoopStateMachine.Chore) { accept(.requested(chore)) }

  /// Asks for `timer` to fire at `deadline` on the manager's clock.
  func schedule(_ timer: ManagerLoopStateMachine.Timer, at deadline: NearbyClock.Instant) {
    accept(.schedule(timer, at: deadline))
  }

  /// One run of a chore.
  private func run(_ chore: ManagerLoopStateMachine.Chore) async {
    switch chore {
    case .flushSightings: await flushSightings()
    case .requestDirectives: await requestDirectives()
    case .lookUpBeacons: await drainBeaconLookups()
    case .reconcileBeaconScanning: await reconcileBeaconScanning()
    case .reconcileMediums: await reconcileMediums()
    case .applyPermission: await applyPermissionAnswer()
    }
  }

  /// What a timer that fired is for; each says itself whether it is still due.
  private func fire(_ timer: ManagerLoopStateMachine.Timer) async {
    switch timer {
    case .refresh(let generation): await refreshDirectives(generation)
    case .beaconSweep(let number, let period): sweepBeacons(number, thenEvery: period)
    }
  }

  /// What a source said; none of these awaits.
  private func handle(_ occurrence: ManagerLoopStateMachine.Occurrence) {
    switch occurrence {
    case .mediumStatus(let index, let status): mediumStatusChanged(index, status)
    case .beaconHeard(let sighting): beaconHeard(sighting)
    case .resolverEvent(let event): deliver([event])
    case .permissionAnswer(let answer): gateAnswered(answer)
    case .resolverEventsEnded:
      preconditionFailure("the end of the resolver's events is handled by a task of its own")
    }
  }
}
