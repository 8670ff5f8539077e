/// Which publications and subscriptions run and which pause, decided from the two things
/// that pause them: the user's Nearby permission and the app's state.
///
/// Without permission everything pauses. In background only handles whose strategy allows
/// background work keep running. When either changes, ``plan(publications:subscriptions:)``
/// says which handles change and how: a handle the resolver knows is withdrawn from it or
/// given back (in one report), one it does not know (a beacon subscription) pauses or
/// resumes locally (its TTL starts anew on resume).
///
/// A value owned by the manager's actor, which performs the plan (status cells, the report,
/// the beacon tracking, local expiry) and, when the report fails, marks the resumed handles
/// paused again.
struct PauseStateMachine {
  /// What the machine needs of one handle.
  struct Handle: Equatable {
    var allowsBackground: Bool
    var isPaused: Bool
    /// Whether the resolver knows it (false: a beacon subscription).
    var reportsToResolver = true
  }

  /// The changes to make, each list sorted for a stable order.
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

  /// Whether the Nearby permission allows discovery.
  private(set) var permissionGranted: Bool
  private(set) var appState: MessageManager.AppState

  init(permissionGranted: Bool = true, appState: MessageManager.AppState = .foreground) {
    self.permissionGranted = permissionGranted
    self.appState = appState
  }

  /// The app changed state; true when it is a change (then plan again).
  mutating func setAppState(_ state: MessageManager.AppState) -> Bool {
    guard state != appState else { return false }
    appState = state
    return true
  }

  /// The permission's answer is now `granted`; true when it is a change (then plan again).
  mutating func setPermission(_ granted: Bool) -> Bool {
    guard granted != permissionGranted else { return false }
    permissionGranted = granted
    return true
  }

  /// Whether a handle must be paused now.
  func mustPause(allowsBackground: Bool) -> Bool {
    !permissionGranted || (appState == .background && !allowsBackground)
  }

  /// Which of these handles must change now.
  func plan(
    publications: [PublicationID: Handle], subscriptions: [SubscriptionID: Handle]
  ) -> Plan {
    var plan = Plan()
    for (id, handle) in publications.sorted(by: { $0.key.identifier < $1.key.identifier }) {
      let pause = mustPause(allowsBackground: handle.allowsBackground)
      guard pause != handle.isPaused else { continue }
      if pause { plan.pausePublications.append(id) } else { plan.resumePublications.append(id) }
    }
    for (id, handle) in subscriptions.sorted(by: { $0.key.identifier < $1.key.identifier }) {
      let pause = mustPause(allowsBackground: handle.allowsBackground)
      guard pause != handle.isPaused else { continue }
      switch (pause, handle.reportsToResolver) {
      case (true, true): plan.pauseSubscriptions.append(id)
      case (false, true): plan.resumeSubscriptions.append(id)
      case (true, false): plan.pauseLocalSubscriptions.append(id)
      case (false, false): plan.resumeLocalSubscriptions.append(id)
      }
    }
    return plan
  }
}
