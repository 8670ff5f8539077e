/// What the manager decides, one input at a time (``MessageManager/accept(_:)`` performs it):
/// which chore runs, which handle is let go, which timer sleeps and which fires, and what its
/// ordered sources said (a medium's status, a beacon frame, a resolver event, a permission
/// answer).
///
/// Every input reaches the one machine on the manager's actor: the sources' readers and the
/// manager's own code hand theirs in directly, what is written where nothing can await (a
/// sighting reader, a handle's `deinit`) through the manager's loop. What a source said is
/// handled at once, before the next input, so each source's order holds; those handlers never
/// await (what needs the mediums or the resolver is a chore they ask for).
///
/// A chore is work asked for where nothing can await it: a medium's sighting reader, an
/// event dispatch, the beacon tracking. Each kind runs at most once at a time; a request while
/// it runs leaves exactly one more run after it (a burst of requests costs two runs at most),
/// and kinds run side by side, so a slow beacon look-up never holds up a flush of sightings.
///
/// The machine also keeps where the manager is in its life (``Lifecycle``): once its shutdown
/// has begun, nothing is decided any more, whatever comes in.
///
/// Timers are inputs too: the manager asks for one with ``Input/schedule(_:at:)``, a task of
/// its group sleeps on the manager's clock and hands the fire back as ``Input/fired(_:)``. The
/// machine keeps each timer asleep until it fires (a fire of a timer never scheduled is a
/// precondition failure), but does not judge whether it is still due: what the timer is for
/// (a refresh of a generation, a beacon sweep of a number) says that.
struct ManagerLoopStateMachine {
  /// Work the manager does in its group, one run at a time per kind.
  enum Chore: Hashable, Sendable, CaseIterable {
    /// Reports the sightings waiting in the inbox.
    case flushSightings
    /// Asks the resolver for directives (an expiry changed which handles exist).
    case requestDirectives
    /// Asks the resolver about the beacons the tracking queued.
    case lookUpBeacons
    /// Starts, changes or stops beacon scanning on the mediums.
    case reconcileBeaconScanning
    /// Tells the mediums again what to transmit and whether to scan (one recovered).
    case reconcileMediums
    /// Pauses or resumes the handles for the permission's latest answer.
    case applyPermission
  }

  /// What one of the manager's ordered sources said.
  enum Occurrence: Hashable, Sendable {
    /// The medium at this index of the manager's mediums changed its status.
    case mediumStatus(medium: Int, MediumStatus)
    /// A medium heard a beacon frame.
    case beaconHeard(BeaconSighting)
    /// The resolver sent an event for this device.
    case resolverEvent(SequencedEvent)
    /// The resolver's event stream for this device ended.
    case resolverEventsEnded
    /// The permission gate has a new answer.
    case permissionAnswer(Bool?)
  }

  /// A handle whose last reference went away while it was active: unpublish or unsubscribe it.
  enum Release: Equatable, Sendable {
    case publication(PublicationID)
    case subscription(SubscriptionID)
  }

  /// A timer the manager asked for.
  enum Timer: Hashable, Sendable {
    /// The directives of this generation are due for a refresh.
    case refresh(generation: UInt64)
    /// The beacon sweep numbered `number` runs again, then sleeps `period`.
    case beaconSweep(number: UInt64, period: Duration)
  }

  /// Where a manager is in its life.
  enum Lifecycle: Equatable, Sendable {
    /// Publishes, subscribes and follows its resolver.
    case running
    /// Its shutdown stops the handles and the mediums and unregisters the device; a
    /// concurrent shutdown awaits the end of the manager's work.
    case shuttingDown
    /// The shutdown has stopped the handles and the mediums and asked the resolver to
    /// unregister the device (an unregister that failed is logged); the work group's tasks may
    /// still be ending.
    case finished
  }

  /// What the machine is handed.
  enum Input: Sendable {
    /// A chore is asked for.
    case requested(Chore)
    /// A run of a chore ended.
    case ended(Chore)
    /// A handle was let go.
    case released(Release)
    /// Sleep until `deadline` on the manager's clock, then fire `timer`.
    case schedule(Timer, at: NearbyClock.Instant)
    /// A timer's deadline came.
    case fired(Timer)
    /// One of the ordered sources said something.
    case occurred(Occurrence)
    /// A release or a timer's fire ended.
    case taskEnded
    /// The manager's shutdown begins (only while running).
    case shutdownBegan
    /// The manager's shutdown has done its part (only while shutting down).
    case shutdownEnded
  }

  /// What the manager is to do.
  enum Action: Equatable, Sendable {
    /// Runs the chore in the manager's group; ``Input/ended(_:)`` comes once it is over.
    case run(Chore)
    /// Unpublishes or unsubscribes the handle, in the manager's group.
    case release(Release)
    /// Sleeps in the manager's group, then hands in ``Input/fired(_:)``.
    case sleep(until: NearbyClock.Instant, then: Timer)
    /// Does what the timer is for, in the manager's group.
    case fire(Timer)
    /// Hands what a source said to the manager, at once.
    case handle(Occurrence)
  }

  /// Where one kind of chore stands.
  private enum ChoreState {
    case idle
    case running
    /// Running, and asked for again since it started: it runs once more when it ends.
    case runningThenAgain
  }

  /// Where the manager is in its life: only a running manager decides anything.
  private(set) var lifecycle = Lifecycle.running
  private var chores: [Chore: ChoreState] = [:]
  /// The timers asleep, with their deadlines.
  private var asleep: [(timer: Timer, deadline: NearbyClock.Instant)] = []
  /// Releases and timer fires under way (each ends with ``Input/taskEnded``).
  private var tasksUnderWay = 0

  /// Whether nothing is left to do at `now`: no chore runs, no release or fire is under way,
  /// and no timer is due. A test that moves the manager's clock waits for this before it
  /// asserts: a wait for rest, not for an outcome.
  func isIdle(at now: NearbyClock.Instant) -> Bool {
    lifecycle == .running && tasksUnderWay == 0 && !asleep.contains { $0.deadline <= now }
      && chores.values.allSatisfy {
        switch $0 {
        case .idle: true
        case .running, .runningThenAgain: false
        }
      }
  }

  /// Whether a run of `chore` is under way (for tests and logs).
  func isRunning(_ chore: Chore) -> Bool {
    switch chores[chore, default: .idle] {
    case .idle: false
    case .running, .runningThenAgain: true
    }
  }

  /// Whether the manager's shutdown has begun: nothing new starts from then on.
  var isShutDown: Bool { lifecycle != .running }

  /// Decides what to do with one input: nothing once the shutdown has begun, except to note
  /// its end.
  mutating func handle(_ input: Input) -> Action? {
    switch (lifecycle, input) {
    case (.running, .shutdownBegan):
      lifecycle = .shuttingDown
      return nil
    case (.shuttingDown, .shutdownEnded):
      lifecycle = .finished
      return nil
    case (_, .shutdownBegan), (_, .shutdownEnded):
      preconditionFailure("\(input) while \(lifecycle)")
    case (.shuttingDown, _), (.finished, _):
      // The work group takes no more work: a run's end, a timer's fire, a frame are let be.
      return nil
    case (.running, _):
      return decide(input)
    }
  }

  /// What a running manager does with one input.
  private mutating func decide(_ input: Input) -> Action? {
    switch input {
    case .requested(let chore):
      switch chores[chore, default: .idle] {
      case .idle:
        chores[chore] = .running
        return .run(chore)
      case .running, .runningThenAgain:
        chores[chore] = .runningThenAgain
        return nil
      }
    case .ended(let chore):
      switch chores[chore, default: .idle] {
      case .idle:
        preconditionFailure("a run of \(chore) ended that never started")
      case .running:
        chores[chore] = .idle
        return nil
      case .runningThenAgain:
        chores[chore] = .running
        return .run(chore)
      }
    case .released(let release):
      tasksUnderWay += 1
      return .release(release)
    case .schedule(let timer, let deadline):
      // Generations and sweep numbers are never reused: a fire names one sleeper.
      precondition(!asleep.contains { $0.timer == timer }, "\(timer) scheduled twice")
      asleep.append((timer, deadline))
      return .sleep(until: deadline, then: timer)
    case .fired(let timer):
      guard let index = asleep.firstIndex(where: { $0.timer == timer }) else {
        preconditionFailure("\(timer) fired without being scheduled")
      }
      asleep.remove(at: index)
      tasksUnderWay += 1
      return .fire(timer)
    case .occurred(let occurrence):
      return .handle(occurrence)
    case .taskEnded:
      guard tasksUnderWay > 0 else {
        preconditionFailure("a release or a fire ended while none was under way")
      }
      tasksUnderWay -= 1
      return nil
    case .shutdownBegan, .shutdownEnded:
      preconditionFailure("the lifecycle's inputs are decided by handle(_:)")
    }
  }
}
