import Core
import Testing

@testable import BLEBlueZ

/// The monitor-refusal decisions on instants: no bluetoothd, no sleeping.
@Suite("Monitor refusals, decided on instants")
struct MonitorRefusalStateMachineTests {
  let start = NearbyClock.Instant(offset: .seconds(100))
  func at(_ seconds: Double) -> NearbyClock.Instant { start + .seconds(seconds) }

  @Test("a release right after the registration is a refusal; the delays grow 1, 2, 4, 8 s")
  func quickReleasesAreRefusals() {
    var machine = MonitorRefusalStateMachine(
      configuration: .init(refusalsBeforeDiscovery: 10, fallback: .seconds(60)))
    var delays: [Duration] = []
    for attempt in 0..<5 {
      let t = Double(attempt) * 20
      machine.registered(at: at(t))
      let decision = machine.released(at: at(t + 1))
      #expect(decision.verdict == .refusal && decision.refusals == attempt + 1)
      #expect(decision.fallbackUntil == nil)
      delays.append(decision.delay)
    }
    #expect(delays == [.seconds(1), .seconds(2), .seconds(4), .seconds(8), .seconds(8)])
    #expect(!machine.monitorsRefused(at: at(100)))
  }

  @Test(
    "the third refusal in a row sets monitors aside for the fallback, then they are tried again")
  func fallbackToDiscovery() {
    var machine = MonitorRefusalStateMachine(configuration: .init(fallback: .seconds(60)))
    #expect(machine.registrationFailed(at: at(0)).fallbackUntil == nil)
    machine.registered(at: at(2))
    #expect(machine.released(at: at(3)).refusals == 2)
    let third = machine.registrationFailed(at: at(10))
    #expect(third.verdict == .refusal && third.refusals == 3 && third.fallbackUntil == at(70))
    #expect(machine.monitorsRefused(at: at(10)))
    #expect(machine.monitorsRefused(at: at(69.9)))
    #expect(!machine.monitorsRefused(at: at(70)))
  }

  @Test("a late release, a report or a new bluetoothd clears the count")
  func clearing() {
    var machine = MonitorRefusalStateMachine(configuration: .init(retryDelay: .milliseconds(100)))
    _ = machine.registrationFailed(at: at(0))
    _ = machine.registrationFailed(at: at(1))
    machine.registered(at: at(2))
    let late = machine.released(at: at(7))  // 5 s: not quick
    #expect(late.verdict == .release && late.refusals == 0 && late.delay == .milliseconds(100))
    _ = machine.registrationFailed(at: at(8))
    _ = machine.registrationFailed(at: at(9))
    machine.reported()
    #expect(machine.registrationFailed(at: at(10)).refusals == 1)
    _ = machine.registrationFailed(at: at(11))
    _ = machine.registrationFailed(at: at(12))
    #expect(machine.monitorsRefused(at: at(13)))
    machine.reset()
    #expect(!machine.monitorsRefused(at: at(13)) && machine.refusals == 0)
  }
}
