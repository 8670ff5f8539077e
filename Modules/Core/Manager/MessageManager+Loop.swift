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
  /// Starts the manager's loop in its work group: it reads ``inputs`` one at a time, hands
  /// each to a ``ManagerLoopStateMachine`` and performs the answer, starting each run, release
  /// and timer as a task of one discarding group. The loop holds the manager weakly and ends
  /// when the manager shuts down (its work is cancelled) or is released.
  func startLoop() {
    let (inputs, clock) = (inputs, clock)
    start { [weak self] in
      await withDiscardingTaskGroup { group in
        var machine = ManagerLoopStateMachine()
        for await input in inputs.stream {
          switch machine.handle(input) {
          case nil:
            break
          case .run(let chore)?:
            group.addTask { [weak self] in
              await self?.run(chore)
              inputs.send(.ended(chore))
            }
          case .release(let release)?:
            group.addTask { [weak self] in
              switch release {
              case .publication(let id): await self?.unpublish(id)
              case .subscription(let id): await self?.unsubscribe(id)
              }
            }
          case .sleep(let deadline, let timer)?:
            group.addTask {
              guard (try? await clock.sleep(until: deadline)) != nil else { return }
              inputs.send(.fired(timer))
            }
          case .fire(let timer)?:
            group.addTask { [weak self] in await self?.fire(timer) }
          }
        }
        // Ended (the manager shut down or was released): the sleeping timers go too.
        group.cancelAll()
      }
    }
  }

  /// One run of a chore.
  private func run(_ chore: ManagerLoopStateMachine.Chore) async {
    switch chore {
    case .flushSightings: await flushSightings()
    case .requestDirectives: await requestDirectives()
    case .lookUpBeacons: await drainBeaconLookups()
    case .reconcileBeaconScanning: await reconcileBeaconScanning()
    }
  }

  /// What a timer that fired is for; each says itself whether it is still due.
  private func fire(_ timer: ManagerLoopStateMachine.Timer) async {
    switch timer {
    case .refresh(let generation): await refreshDirectives(generation)
    case .beaconSweep(let number, let period): sweepBeacons(number, thenEvery: period)
    }
  }
}
