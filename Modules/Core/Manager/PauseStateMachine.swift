/// Which publications and subscriptions run and which pause, decided from the two things
/// that pause them: the user's Nearby permission and the app's state.
///
/// Without permission everything pauses. In background only handles whose strategy allows
/// background work keep running. The machine holds every handle of the manager with whether
/// it runs, so the answer to "is it paused?" has one home. Each change (a handle added, the
/// permission answered, the app state told) returns what the manager must do: a new
/// handle's ``Run``, or a ``Plan`` saying which handles change and how: a handle the
/// resolver knows is withdrawn from it or given back (in one report), one it does not know (a
/// beacon subscription) pauses or resumes locally (its TTL starts anew on resume).
///
/// A value owned by the manager's actor, which performs every plan (status cells, the
/// report, the beacon tracking, local expiry) and, when the report fails, says so with
/// ``resumeFailed(publications:subscriptions:)``.
struct PauseStateMachine {
  /// Whether the Nearby permission allows discovery.
  enum Permission: Equatable {
    case granted
    case denied
  }

  /// Whether a handle may run with the app in background.
  enum Reach: Equatable {
    case foregroundOnly
    case background
  }

  /// Who carries a handle out.
  enum Keeper: Equatable {
    /// The resolver (withdrawn and given back by reports).
    case resolver
    /// The manager alone (a beacon subscription: its TTL timer).
    case local
  }

  /// Whether a handle runs now.
  enum Run: Equatable {
    case running
    case paused
  }

  /// What the machine holds of one handle.
  struct Handle: Equatable {
    var reach: Reach
    var keeper: Keeper
    var run: Run
  }

  /// The changes to make, each list sorted for a stable order. The machine already counts
  /// them as made.
  struct Plan: Equatable {
    var pausePublications: [PublicationID] = []
    var resumePublications: [PublicationID] = []
    /// Withdraw from the resolver.
    var pauseSubscriptions: [SubscriptionID] = []
    /// Give back to the resolver.
    var resumeSubscriptions: [SubscriptionID] = []
    /// Pause locally (stop the TTL timer).
    var pauseLocalSubscriptions: [SubscriptionID] = []
    /// Resume locally (a new TTL).
    var resumeLocalSubscriptions: [SubscriptionID] = []

    var isEmpty: Bool { self == Plan() }
    /// Whether the resolver must be told.
    var needsReport: Bool {
      !(pausePublications.isEmpty && resumePublications.isEmpty && pauseSubscriptions.isEmpty
        && resumeSubscriptions.isEmpty)
    }
  }

  private(set) var permission: Permission
  private(set) var appState: MessageManager.AppState
  private var publications: [PublicationID: Handle] = [:]
  private var subscriptions: [SubscriptionID: Handle] = [:]

  init(permission: Permission = .granted, appState: MessageManager.AppState = .foreground) {
    self.permission = permission
    self.appState = appState
  }

  // MARK: Handles

  /// A new publication; returns whether it runs now or starts paused.
  mutating func addPublication(_ id: PublicationID, reach: Reach) -> Run {
    let run = runs(reach)
    publications[id] = Handle(reach: reach, keeper: .resolver, run: run)
    return run
  }

  /// A new subscription; returns whether it runs now or starts paused.
  mutating func addSubscription(_ id: SubscriptionID, reach: Reach, keeper: Keeper) -> Run {
    let run = runs(reach)
    subscriptions[id] = Handle(reach: reach, keeper: keeper, run: run)
    return run
  }

  /// The publication ended.
  mutating func removePublication(_ id: PublicationID) { publications[id] = nil }

  /// The subscription ended.
  mutating func removeSubscription(_ id: SubscriptionID) { subscriptions[id] = nil }

  /// Forgets every handle (the manager shut down).
  mutating func removeAll() {
    publications = [:]
    subscriptions = [:]
  }

  func isRunning(publication id: PublicationID) -> Bool { publications[id]?.run == .running }
  func isRunning(subscription id: SubscriptionID) -> Bool { subscriptions[id]?.run == .running }

  // MARK: Changes

  /// The app changed state: what changes (empty when the state is the same).
  mutating func setAppState(_ state: MessageManager.AppState) -> Plan {
    guard state != appState else { return Plan() }
    appState = state
    return replan()
  }

  /// The permission's answer is now `permission`: what changes (empty when it is the same).
  mutating func setPermission(_ permission: Permission) -> Plan {
    guard permission != self.permission else { return Plan() }
    self.permission = permission
    return replan()
  }

  /// The report that gave these handles back to the resolver failed: they stay paused (the
  /// next change of permission or app state tries again).
  mutating func resumeFailed(publications: [PublicationID], subscriptions: [SubscriptionID]) {
    for id in publications where self.publications[id] != nil {
      self.publications[id]?.run = .paused
    }
    for id in subscriptions where self.subscriptions[id] != nil {
      self.subscriptions[id]?.run = .paused
    }
  }

  private func runs(_ reach: Reach) -> Run {
    switch (permission, appState, reach) {
    case (.denied, _, _), (.granted, .background, .foregroundOnly): .paused
    case (.granted, .foreground, _), (.granted, .background, .background): .running
    }
  }

  /// Moves every handle to what it must be now and says which moved.
  private mutating func replan() -> Plan {
    var plan = Plan()
    for id in publications.keys.sorted(by: { $0.identifier < $1.identifier }) {
      let run = runs(publications[id]!.reach)
      guard run != publications[id]!.run else { continue }
      publications[id]!.run = run
      if run == .paused {
        plan.pausePublications.append(id)
      } else {
        plan.resumePublications.append(id)
      }
    }
    for id in subscriptions.keys.sorted(by: { $0.identifier < $1.identifier }) {
      let handle = subscriptions[id]!
      let run = runs(handle.reach)
      guard run != handle.run else { continue }
      subscriptions[id]!.run = run
      switch (run, handle.keeper) {
      case (.paused, .resolver): plan.pauseSubscriptions.append(id)
      case (.running, .resolver): plan.resumeSubscriptions.append(id)
      case (.paused, .local): plan.pauseLocalSubscriptions.append(id)
      case (.running, .local): plan.resumeLocalSubscriptions.append(id)
      }
    }
    return plan
  }
}
