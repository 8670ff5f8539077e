import Testing

@testable import Core

/// The manager loop's machine on inputs: a chore runs once at a time per kind, a burst of
/// requests while it runs leaves one more run, kinds run side by side; releases and timers
/// pass to the loop as actions. No clock, no manager.
@Suite("ManagerLoopStateMachine")
struct ManagerLoopStateMachineTests {
  typealias Machine = ManagerLoopStateMachine

  @Test("a request runs the chore; the end of the run leaves it idle")
  func requestRuns() {
    var machine = Machine()
    #expect(machine.handle(.requested(.flushSightings)) == .run(.flushSightings))
    #expect(machine.isRunning(.flushSightings))
    #expect(machine.handle(.ended(.flushSightings)) == nil)
    #expect(!machine.isRunning(.flushSightings))
    // Idle again: the next request runs at once.
    #expect(machine.handle(.requested(.flushSightings)) == .run(.flushSightings))
  }

  @Test("a burst of requests during a run leaves exactly one more run")
  func burstCoalesces() {
    var machine = Machine()
    #expect(machine.handle(.requested(.lookUpBeacons)) == .run(.lookUpBeacons))
    for _ in 0..<100 { #expect(machine.handle(.requested(.lookUpBeacons)) == nil) }
    #expect(machine.handle(.ended(.lookUpBeacons)) == .run(.lookUpBeacons))
    #expect(machine.handle(.ended(.lookUpBeacons)) == nil)
    #expect(!machine.isRunning(.lookUpBeacons))
  }

  @Test("each kind of chore runs on its own: a long look-up never holds up a flush")
  func kindsRunSideBySide() {
    var machine = Machine()
    for chore in Machine.Chore.allCases {
      #expect(machine.handle(.requested(chore)) == .run(chore))
    }
    for chore in Machine.Chore.allCases { #expect(machine.isRunning(chore)) }
    #expect(machine.handle(.ended(.flushSightings)) == nil)
    #expect(machine.handle(.requested(.flushSightings)) == .run(.flushSightings))
    #expect(machine.isRunning(.lookUpBeacons))
  }

  @Test("releases and timers become actions as they come, each one")
  func releasesAndTimers() {
    var machine = Machine()
    let publication = PublicationID.random()
    let subscription = SubscriptionID.random()
    #expect(
      machine.handle(.released(.publication(publication))) == .release(.publication(publication)))
    #expect(
      machine.handle(.released(.subscription(subscription)))
        == .release(.subscription(subscription)))
    let deadline = NearbyClock.Instant(offset: .seconds(30))
    let refresh = Machine.Timer.refresh(generation: 4)
    #expect(
      machine.handle(.schedule(refresh, at: deadline)) == .sleep(until: deadline, then: refresh))
    #expect(machine.handle(.fired(refresh)) == .fire(refresh))
    let sweep = Machine.Timer.beaconSweep(number: 2, period: .seconds(1))
    #expect(
      machine.handle(.schedule(sweep, at: deadline)) == .sleep(until: deadline, then: sweep))
    #expect(machine.handle(.fired(sweep)) == .fire(sweep))
    // None of them touches a chore.
    for chore in Machine.Chore.allCases { #expect(!machine.isRunning(chore)) }
  }

  @Test("idle: no chore running, no release or fire under way, no timer due at the instant")
  func idleOnInstants() {
    var machine = Machine()
    let start = NearbyClock.Instant(offset: .seconds(10))
    #expect(machine.isIdle(at: start))
    // A chore runs: busy until it ends.
    _ = machine.handle(.requested(.flushSightings))
    #expect(!machine.isIdle(at: start))
    _ = machine.handle(.ended(.flushSightings))
    #expect(machine.isIdle(at: start))
    // A timer asleep is idle until its deadline, then busy until it fired and its work ended.
    let refresh = Machine.Timer.refresh(generation: 1)
    let deadline = start + .seconds(30)
    _ = machine.handle(.schedule(refresh, at: deadline))
    #expect(machine.isIdle(at: start))
    #expect(!machine.isIdle(at: deadline))
    _ = machine.handle(.fired(refresh))
    #expect(!machine.isIdle(at: deadline))
    #expect(machine.handle(.taskEnded) == nil)
    #expect(machine.isIdle(at: deadline))
    // A release is busy until it ended.
    _ = machine.handle(.released(.publication(PublicationID.random())))
    #expect(!machine.isIdle(at: deadline))
    _ = machine.handle(.taskEnded)
    #expect(machine.isIdle(at: deadline))
  }

  @Test("what a source said is handed back as it came, in order, and touches no chore")
  func occurrencesPassInOrder() {
    var machine = Machine()
    let occurrences: [Machine.Occurrence] = [
      .mediumStatus(medium: 1, .poweredOff), .permissionAnswer(true),
      .mediumStatus(medium: 1, .ready), .permissionAnswer(nil), .resolverEventsEnded,
    ]
    let actions = occurrences.map { machine.handle(.occurred($0)) }
    #expect(actions == occurrences.map { .handle($0) })
    for chore in Machine.Chore.allCases { #expect(!machine.isRunning(chore)) }
  }

  @Test("once its shutdown has begun, the manager decides nothing, and is never idle again")
  func nothingDecidedAfterShutdown() {
    var machine = Machine()
    let refresh = Machine.Timer.refresh(generation: 1)
    let now = NearbyClock.Instant(offset: .zero)
    #expect(machine.handle(.requested(.flushSightings)) == .run(.flushSightings))
    #expect(machine.handle(.schedule(refresh, at: now)) == .sleep(until: now, then: refresh))
    #expect(machine.lifecycle == .running && !machine.isShutDown)
    #expect(machine.handle(.shutdownBegan) == nil)
    #expect(machine.lifecycle == .shuttingDown && machine.isShutDown)
    // What was under way ends, what comes in is let be: no run, no fire, no handling.
    let late: [Machine.Input] = [
      .ended(.flushSightings), .requested(.lookUpBeacons), .fired(refresh),
      .released(.publication(PublicationID.random())), .occurred(.permissionAnswer(true)),
      .schedule(refresh, at: now), .taskEnded,
    ]
    for input in late { #expect(machine.handle(input) == nil) }
    #expect(!machine.isIdle(at: now))
    #expect(machine.handle(.shutdownEnded) == nil)
    #expect(machine.lifecycle == .finished)
    for input in late { #expect(machine.handle(input) == nil) }
    #expect(!machine.isIdle(at: now))
  }
}
