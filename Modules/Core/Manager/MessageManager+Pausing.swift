import Foundation
import Logging
import Synchronization

extension MessageManager {
  /// Whether the app is in front of the user or in background (the seed's app life cycle).
  public enum AppState: String, Sendable, Hashable {
    case foreground
    case background
  }

  /// The app state the manager was last told.
  public var currentAppState: AppState { pausing.appState }

  /// Whether Nearby permission allows discovery now (always true without a permission gate).
  /// While it is false every publication and subscription is ``HandleStatus/paused``.
  public var isPermissionGranted: Bool { pausing.permission == .granted }

  /// Tells the manager that the app went to background or came back. In background, only
  /// publications and subscriptions whose strategy allows background work
  /// (`Strategy.allowInBackground`, BLE only) keep running; the others are withdrawn from the
  /// resolver and show ``HandleStatus/paused`` until the app is in the foreground again.
  /// A resumed handle starts a new TTL, and a resumed subscription finds its messages again.
  public func setAppState(_ state: AppState) async {
    guard !isShutDown else { return }
    let plan = pausing.setAppState(state)
    logger.debug("app state told", metadata: ["state": "\(state.rawValue)"])
    await performPauses(plan)
  }

  /// The permission is now `granted`: performs what changes with it.
  private func permissionIs(_ granted: Bool) async {
    await performPauses(pausing.setPermission(granted ? .granted : .denied))
  }

  /// Withdraws the handles that pause and gives back those that run again, in one report. A
  /// report that fails leaves the resumed handles paused (logged); the next change of
  /// permission or app state tries again.
  func performPauses(_ plan: PauseStateMachine.Plan) async {
    guard !plan.isEmpty, !isShutDown else { return }
    var report = Report()
    for id in plan.pausePublications {
      publications[id]?.cell.set(.paused)
      report.unpublish.append(id)
    }
    for id in plan.resumePublications {
      guard let spec = publications[id]?.spec else { continue }
      report.publish.append(spec)
    }
    for id in plan.pauseSubscriptions + plan.pauseLocalSubscriptions {
      subscriptions[id]?.cell.set(.paused)
      beaconTracking.forget(id)
    }
    report.unsubscribe = plan.pauseSubscriptions
    for id in plan.pauseLocalSubscriptions { stopLocalExpiry(id) }
    for id in plan.resumeSubscriptions {
      guard let spec = subscriptions[id]?.spec else { continue }
      report.subscribe.append(spec)
    }
    for id in plan.resumeLocalSubscriptions {
      // Beacons only: nothing to tell the resolver; the TTL starts anew.
      guard let record = subscriptions[id] else { continue }
      record.cell.set(.active)
      startLocalExpiry(id, ttl: record.spec.strategy.ttl)
    }
    await reconcileBeaconScanning()
    guard plan.needsReport else { return }
    do {
      // An app with more handles than one report may carry changes them in several.
      for part in report.parts { try await send(part) }
    } catch {
      logger.warning(
        "pausing or resuming handles failed; resumed ones stay paused",
        metadata: ["error": "\(error)"])
      pausing.resumeFailed(
        publications: report.publish.map(\.id), subscriptions: report.subscribe.map(\.id))
      if report.subscribe.contains(where: { subscriptions[$0.id]?.beacons != nil }) {
        for spec in report.subscribe { beaconTracking.forget(spec.id) }
        await reconcileBeaconScanning()
      }
      return
    }
    for spec in report.publish where pausing.isRunning(publication: spec.id) {
      publications[spec.id]?.cell.set(.active)
    }
    for spec in report.subscribe where pausing.isRunning(subscription: spec.id) {
      subscriptions[spec.id]?.cell.set(.active)
    }
  }

  // MARK: Permission

  /// Brings the permission up to date before a new handle: without a permission gate it is
  /// always granted; otherwise the recorded answer, asking the user first when there is none
  /// (one request at a time). An answer that differs from what the manager knew pauses or
  /// resumes the handles it has, as an answer from the gate's stream would.
  func updatePermission(asking handler: PermissionRequestHandler?) async {
    guard let gate = configuration.permission else { return }
    switch await gate.answer() {
    case true?:
      await permissionIs(true)
      return
    case false?:
      await permissionIs(false)
      logDenied(gate, because: "the user denied it")
      return
    case nil:
      break
    }
    guard !isShutDown else { return }
    if permissionWaiters == nil {
      // The request runs in the manager's work, not in this caller's task: a caller that is
      // cancelled does not cut the user's answer short for everyone waiting.
      permissionWaiters = []
      start { [weak self] in
        guard let self else { return }
        let granted = await self.askForPermission(gate, handler: handler)
        await self.permissionAnswered(granted)
      }
    }
    let granted = await withCheckedContinuation { permissionWaiters?.append($0) }
    await permissionIs(granted)
  }

  /// The request ended: every caller waiting for it goes on with its answer.
  private func permissionAnswered(_ granted: Bool) {
    let waiters = permissionWaiters ?? []
    permissionWaiters = nil
    for waiter in waiters { waiter.resume(returning: granted) }
  }

  /// At shutdown: callers still waiting for the user go on, not granted.
  func endPermissionRequest() { permissionAnswered(false) }

  private func askForPermission(
    _ gate: any PermissionGate, handler: PermissionRequestHandler?
  ) async -> Bool {
    let answer: Bool?
    let reason: String
    if let handler {
      answer = await Self.call(
        handler, timeout: configuration.permissionRequestTimeout, clock: configuration.clock)
      reason =
        answer != nil
        ? "the user denied it"
        : Task.isCancelled
          ? "the manager shut down before the app's permission request handler answered"
          : "the app's permission request handler did not answer within "
            + "\(configuration.permissionRequestTimeout)"
    } else {
      answer = await gate.ask(logger: logger)
      reason = answer == nil ? "there is no terminal to ask on" : "the user denied it"
    }
    if let answer {
      do {
        try await gate.record(answer)
      } catch {
        logger.error("recording the Nearby permission failed", metadata: ["error": "\(error)"])
      }
    }
    if answer != true { logDenied(gate, because: reason) }
    return answer == true
  }

  private func logDenied(_ gate: any PermissionGate, because reason: String) {
    let text =
      "Nearby permission is not granted (\(reason)): publications and subscriptions stay "
      + "paused; to grant it: \(gate.howToGrant)"
    logger.warning("\(text)")
  }

  /// Calls `handler` and waits for its first answer, or `nil` after `timeout`.
  private static func call(
    _ handler: PermissionRequestHandler, timeout: Duration, clock: any Clock<Duration>
  ) async -> Bool? {
    let once = Once()
    return await withTaskGroup(of: Void.self) { group in
      // The timeout answers `nil` unless the handler answered first; cancelled once it did.
      group.addTask {
        try? await clock.sleep(for: timeout)
        once.resume(with: nil)
      }
      let answer = await withCheckedContinuation { continuation in
        once.install(continuation)
        handler { granted in once.resume(with: granted) }
      }
      group.cancelAll()
      return answer
    }
  }

  /// A continuation resumed by the first of several racing callers.
  private final class Once: Sendable {
    private struct State {
      var continuation: CheckedContinuation<Bool?, Never>?
      var early: Bool??
    }
    private let state = Mutex(State())

    func install(_ continuation: CheckedContinuation<Bool?, Never>) {
      let early: Bool?? = state.withLock { state in
        if let early = state.early { return early }
        state.continuation = continuation
        return nil
      }
      if let early { continuation.resume(returning: early) }
    }

    func resume(with value: Bool?) {
      let continuation = state.withLock { state in
        guard state.early == nil else { return CheckedContinuation<Bool?, Never>?.none }
        state.early = .some(value)
        defer { state.continuation = nil }
        return state.continuation
      }
      continuation?.resume(returning: value)
    }
  }

  /// The gate reports a new answer (here or in another process): kept, and applied by a
  /// chore (one run at a time, each applying the latest answer).
  func gateAnswered(_ answer: Bool?) {
    latestPermissionAnswer = answer
    request(.applyPermission)
  }

  /// Pauses or resumes the handles for the gate's latest answer.
  func applyPermissionAnswer() async {
    let granted = latestPermissionAnswer == true
    guard !isShutDown, granted != isPermissionGranted else { return }
    if granted {
      logger.info("Nearby permission granted: paused publications and subscriptions resume")
    } else {
      logger.info("Nearby permission withdrawn: publications and subscriptions pause")
    }
    await permissionIs(granted)
  }
}
