import Testing

@testable import Core

/// Which handles pause, on values: handles, the permission and the app state in, the plans out.
@Suite("PauseStateMachine")
struct PauseStateMachineTests {
  let foregroundOnly = PublicationID.random()
  let background = PublicationID.random()
  let listening = SubscriptionID.random()
  let beacons = SubscriptionID.random()

  /// A machine holding the four handles, all added while allowed to run.
  func machine() -> PauseStateMachine {
    var machine = PauseStateMachine()
    #expect(machine.addPublication(foregroundOnly, reach: .foregroundOnly) == .running)
    #expect(machine.addPublication(background, reach: .background) == .running)
    #expect(
      machine.addSubscription(listening, reach: .foregroundOnly, keeper: .resolver) == .running)
    #expect(machine.addSubscription(beacons, reach: .foregroundOnly, keeper: .local) == .running)
    return machine
  }

  @Test("the rule: no permission pauses everything; background pauses what does not allow it")
  func rule() {
    var machine = PauseStateMachine()
    #expect(machine.addPublication(.random(), reach: .foregroundOnly) == .running)
    _ = machine.setAppState(.background)
    #expect(machine.addPublication(.random(), reach: .foregroundOnly) == .paused)
    #expect(machine.addPublication(.random(), reach: .background) == .running)
    _ = machine.setPermission(.denied)
    #expect(machine.addPublication(.random(), reach: .background) == .paused)
    #expect(
      machine.addSubscription(.random(), reach: .background, keeper: .local) == .paused)
  }

  @Test("going to background withdraws the foreground-only handles, beacon ones locally")
  func toBackground() {
    var machine = machine()
    let plan = machine.setAppState(.background)
    #expect(plan.pausePublications == [foregroundOnly])
    #expect(plan.pauseSubscriptions == [listening])
    #expect(plan.pauseLocalSubscriptions == [beacons])
    #expect(plan.resumePublications.isEmpty && plan.resumeSubscriptions.isEmpty)
    #expect(plan.needsReport)
    #expect(!machine.isRunning(publication: foregroundOnly))
    #expect(machine.isRunning(publication: background))
    // Told what it knows: nothing to do.
    #expect(machine.setAppState(.background).isEmpty)
  }

  @Test("back in foreground the paused handles resume, once")
  func backToForeground() {
    var machine = machine()
    _ = machine.setAppState(.background)
    let plan = machine.setAppState(.foreground)
    #expect(plan.resumePublications == [foregroundOnly])
    #expect(plan.resumeSubscriptions == [listening])
    #expect(plan.resumeLocalSubscriptions == [beacons])
    #expect(plan.pausePublications.isEmpty)
    #expect(machine.isRunning(publication: foregroundOnly))
    #expect(machine.setAppState(.foreground).isEmpty)
  }

  @Test("permission denied then granted: everything pauses, then everything resumes")
  func permission() {
    var machine = machine()
    let denied = machine.setPermission(.denied)
    #expect(
      denied.pausePublications.sorted { $0.identifier < $1.identifier }
        == [foregroundOnly, background].sorted { $0.identifier < $1.identifier })
    #expect(denied.pauseSubscriptions == [listening])
    #expect(machine.setPermission(.denied).isEmpty)
    let granted = machine.setPermission(.granted)
    #expect(granted.resumePublications.count == 2)
    #expect(granted.resumeSubscriptions == [listening])
    #expect(granted.resumeLocalSubscriptions == [beacons])
  }

  @Test("a resume whose report failed leaves the handles paused; the next change resumes them")
  func resumeFailed() {
    var machine = machine()
    _ = machine.setPermission(.denied)
    let granted = machine.setPermission(.granted)
    machine.resumeFailed(
      publications: granted.resumePublications, subscriptions: granted.resumeSubscriptions)
    #expect(!machine.isRunning(publication: foregroundOnly))
    #expect(!machine.isRunning(subscription: listening))
    // The local beacon subscription needed no report: it runs.
    #expect(machine.isRunning(subscription: beacons))
    // Background then foreground: the failed ones are given back this time.
    _ = machine.setAppState(.background)
    let again = machine.setAppState(.foreground)
    #expect(again.resumePublications.contains(foregroundOnly))
    #expect(again.resumeSubscriptions == [listening])
  }

  @Test("only beacon subscriptions changing: no report to send; removed handles are not planned")
  func localOnly() {
    var machine = PauseStateMachine()
    _ = machine.addSubscription(beacons, reach: .background, keeper: .local)
    let gone = PublicationID.random()
    _ = machine.addPublication(gone, reach: .background)
    machine.removePublication(gone)
    let plan = machine.setPermission(.denied)
    #expect(plan.pauseLocalSubscriptions == [beacons])
    #expect(plan.pausePublications.isEmpty)
    #expect(!plan.needsReport)
    #expect(!machine.isRunning(publication: gone))
  }
}
