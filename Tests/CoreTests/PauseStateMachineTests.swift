import Testing

@testable import Core

/// Which handles pause, on values: the permission and app state in, the plan out.
@Suite("PauseStateMachine")
struct PauseStateMachineTests {
  typealias Handle = PauseStateMachine.Handle
  let foregroundOnly = PublicationID.random()
  let background = PublicationID.random()
  let listening = SubscriptionID.random()
  let beacons = SubscriptionID.random()

  func handles(paused: Bool) -> (
    publications: [PublicationID: Handle], subscriptions: [SubscriptionID: Handle]
  ) {
    (
      [
        foregroundOnly: Handle(allowsBackground: false, isPaused: paused),
        background: Handle(allowsBackground: true, isPaused: false),
      ],
      [
        listening: Handle(allowsBackground: false, isPaused: paused),
        beacons: Handle(allowsBackground: false, isPaused: paused, reportsToResolver: false),
      ]
    )
  }

  @Test("the rule: no permission pauses everything; background pauses what does not allow it")
  func rule() {
    var machine = PauseStateMachine()
    #expect(machine.mustPause(allowsBackground: false) == false)
    #expect(machine.setAppState(.background) == true)
    #expect(machine.mustPause(allowsBackground: false))
    #expect(machine.mustPause(allowsBackground: true) == false)
    #expect(machine.setPermission(false) == true)
    #expect(machine.mustPause(allowsBackground: true))
    // Telling it what it knows is no change: nothing to plan.
    #expect(machine.setPermission(false) == false)
    #expect(machine.setAppState(.background) == false)
  }

  @Test("going to background withdraws the foreground-only handles, beacon ones locally")
  func toBackground() {
    var machine = PauseStateMachine()
    _ = machine.setAppState(.background)
    let (publications, subscriptions) = handles(paused: false)
    let plan = machine.plan(publications: publications, subscriptions: subscriptions)
    #expect(plan.pausePublications == [foregroundOnly])
    #expect(plan.pauseSubscriptions == [listening])
    #expect(plan.pauseLocalSubscriptions == [beacons])
    #expect(plan.resumePublications.isEmpty && plan.resumeSubscriptions.isEmpty)
    #expect(plan.needsReport)
  }

  @Test("back in foreground the paused handles resume; a plan of nothing when nothing changes")
  func backToForeground() {
    let machine = PauseStateMachine()
    let (publications, subscriptions) = handles(paused: true)
    let plan = machine.plan(publications: publications, subscriptions: subscriptions)
    #expect(plan.resumePublications == [foregroundOnly])
    #expect(plan.resumeSubscriptions == [listening])
    #expect(plan.resumeLocalSubscriptions == [beacons])
    let steady = handles(paused: false)
    #expect(
      machine.plan(publications: steady.publications, subscriptions: steady.subscriptions).isEmpty)
  }

  @Test("only beacon subscriptions changing: no report to send")
  func localOnly() {
    var machine = PauseStateMachine()
    _ = machine.setPermission(false)
    let plan = machine.plan(
      publications: [:],
      subscriptions: [
        beacons: Handle(allowsBackground: true, isPaused: false, reportsToResolver: false)
      ])
    #expect(plan.pauseLocalSubscriptions == [beacons])
    #expect(!plan.needsReport)
  }
}
