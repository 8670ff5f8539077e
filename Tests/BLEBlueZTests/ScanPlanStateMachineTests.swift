import Core
import Testing

@testable import BLEBlueZ

/// The scan plan and its watchdog on instants: no bluetoothd, no double, no sleeping.
@Suite("Scan plan, decided on instants")
struct ScanPlanStateMachineTests {
  typealias Machine = ScanPlanStateMachine
  let start = NearbyClock.Instant(offset: .seconds(100))
  func at(_ seconds: Double) -> NearbyClock.Instant { start + .seconds(seconds) }

  static let monitors = Machine.Adapter(monitors: .offered)
  static let noMonitors = Machine.Adapter(monitors: .unsupported)
  static let refused = Machine.Adapter(monitors: .refused)
  static let both: MonitorPatterns = [.tokens, .beacons]

  func machine(
    tokens: Bool = false, beacons: BeaconWish? = nil, reportsAll: Bool = false,
    watchdog: Duration = .seconds(15)
  ) -> Machine {
    var machine = Machine(
      configuration: .init(scanWatchdog: watchdog, reportsAllAdvertisements: reportsAll),
      at: at(0))
    if tokens { machine.startTokens(at: at(0)) }
    if let beacons { machine.startBeacons(lowPower: beacons.lowPower, at: at(0)) }
    return machine
  }

  // MARK: The plan

  @Test("nothing wished: no plan, on any adapter")
  func nothingWished() {
    for adapter in [Self.monitors, Self.noMonitors, Self.refused, nil] {
      #expect(machine().wanted(on: adapter) == nil)
    }
  }

  @Test("a monitor where offered and every wish allows passive scanning")
  func monitorWhereOffered() {
    #expect(machine(tokens: true).wanted(on: Self.monitors) == .monitor(.tokens))
    #expect(
      machine(beacons: .init(lowPower: true)).wanted(on: Self.monitors) == .monitor(.beacons))
    #expect(
      machine(tokens: true, beacons: .init(lowPower: true)).wanted(on: Self.monitors)
        == .monitor(Self.both))
  }

  @Test("active beacon scanning: discovery, with the patterns in a monitor beside it")
  func discoveryBesideAMonitor() {
    #expect(
      machine(beacons: .init(lowPower: false)).wanted(on: Self.monitors)
        == .discovery(beside: .beacons))
    #expect(
      machine(tokens: true, beacons: .init(lowPower: false)).wanted(on: Self.monitors)
        == .discovery(beside: Self.both))
  }

  @Test("discovery alone without monitors, while they are refused, or to report everything")
  func discoveryAlone() {
    for wishes in [
      machine(tokens: true), machine(beacons: .init(lowPower: true)),
      machine(tokens: true, beacons: .init(lowPower: false)),
    ] {
      #expect(wishes.wanted(on: Self.noMonitors) == .discovery(beside: nil))
      #expect(wishes.wanted(on: Self.refused) == .discovery(beside: nil))
      #expect(wishes.wanted(on: nil) == .discovery(beside: nil))
    }
    #expect(
      machine(tokens: true, reportsAll: true).wanted(on: Self.monitors) == .discovery(beside: nil))
  }

  @Test("wishes come and go, repeated or in any order")
  func wishesComeAndGo() {
    var machine = machine()
    machine.startBeacons(lowPower: false, at: at(1))
    machine.startTokens(at: at(2))
    machine.startTokens(at: at(3))
    #expect(machine.wanted(on: Self.monitors) == .discovery(beside: Self.both))
    machine.startBeacons(lowPower: true, at: at(4))  // changed to low power
    #expect(machine.wanted(on: Self.monitors) == .monitor(Self.both))
    machine.stopTokens()
    machine.stopTokens()
    #expect(machine.wanted(on: Self.monitors) == .monitor(.beacons))
    machine.stopBeacons()
    #expect(machine.wanted(on: Self.monitors) == nil)
    machine.startTokens(at: at(5))
    machine.startBeacons(lowPower: true, at: at(5))
    machine.stopAll()
    #expect(machine.wanted(on: Self.monitors) == nil)
  }

  // MARK: The steps

  @Test("the steps: start the wanted plan, stop a wrong one first, nothing when it matches")
  func steps() {
    let tokens = machine(tokens: true)
    #expect(tokens.next(active: nil, on: Self.monitors) == .start(.monitor(.tokens)))
    #expect(tokens.next(active: .monitor(.tokens), on: Self.monitors) == nil)
    // The patterns changed, or the kind: stop, then (asked again) start.
    #expect(
      tokens.next(active: .monitor(Self.both), on: Self.monitors) == .stop(.monitor(Self.both)))
    #expect(
      tokens.next(active: .discovery(beside: nil), on: Self.monitors)
        == .stop(.discovery(beside: nil)))
    // Monitors refused: the monitor gives way to discovery.
    #expect(tokens.next(active: .monitor(.tokens), on: Self.refused) == .stop(.monitor(.tokens)))
    #expect(tokens.next(active: nil, on: Self.refused) == .start(.discovery(beside: nil)))
    // Nothing wished: stop, then nothing.
    #expect(
      machine().next(active: .monitor(.tokens), on: Self.monitors) == .stop(.monitor(.tokens)))
    #expect(machine().next(active: nil, on: Self.monitors) == nil)
  }

  @Test("an unusable adapter: stop the scan, and a wished one cannot start")
  func unusableAdapter() {
    let tokens = machine(tokens: true)
    #expect(
      tokens.next(active: .discovery(beside: nil), on: nil) == .stop(.discovery(beside: nil)))
    #expect(tokens.next(active: nil, on: nil) == .cannotStart)
    #expect(machine().next(active: nil, on: nil) == nil)
  }

  // MARK: The watchdog

  @Test("a scan silent for longer than scanWatchdog, with nothing present, is restarted")
  func watchdogRestartsASilentScan() {
    var machine = machine(tokens: true, watchdog: .seconds(15))
    machine.started(.monitor(.tokens), at: at(1))
    let active = ScanPlan.monitor(.tokens)
    func check(_ seconds: Double, present: Bool = false) -> Machine.WatchdogAction? {
      machine.watchdog(at: at(seconds), active: active, on: Self.monitors, anyPresent: present)
    }
    #expect(check(15.999) == nil)
    #expect(check(16) == nil)  // exactly scanWatchdog: not yet
    #expect(check(16.001, present: true) == nil)  // a device held present is life
    #expect(machine.watchdogRestarts == 0)
    #expect(check(16.001) == .restart)
    #expect(machine.watchdogRestarts == 1)
    // The engine restarts it: the watchdog counts from the new start.
    machine.started(.monitor(.tokens), at: at(17))
    #expect(check(31) == nil)
    #expect(check(32.5) == .restart)
    #expect(machine.watchdogRestarts == 2)
  }

  @Test("life resets the watchdog; life out of order keeps the latest")
  func lifeResetsTheWatchdog() {
    var machine = machine(tokens: true, watchdog: .seconds(15))
    machine.started(.discovery(beside: nil), at: at(0))
    machine.life(at: at(10))
    machine.life(at: at(4))  // out of order
    #expect(machine.lastLife == at(10))
    let active = ScanPlan.discovery(beside: nil)
    #expect(
      machine.watchdog(at: at(25), active: active, on: Self.noMonitors, anyPresent: false) == nil)
    #expect(
      machine.watchdog(at: at(25.5), active: active, on: Self.noMonitors, anyPresent: false)
        == .restart)
  }

  @Test("a wish to scan starts the watchdog's count; a second beacon wish does not")
  func wishesStartTheCount() {
    var machine = machine(watchdog: .seconds(15))
    machine.startBeacons(lowPower: true, at: at(10))
    machine.startBeacons(lowPower: false, at: at(20))
    #expect(machine.lastLife == at(10))
    machine.startTokens(at: at(30))
    #expect(machine.lastLife == at(30))
  }

  @Test("the watchdog applies the plan when BlueZ's scan is not the wanted one")
  func watchdogAppliesAChangedPlan() {
    var machine = machine(tokens: true, watchdog: .seconds(15))
    // A start failed earlier: no scan although one is wished.
    #expect(
      machine.watchdog(at: at(1), active: nil, on: Self.monitors, anyPresent: false) == .apply)
    // Monitors set aside after refusals, or tried again after the fallback.
    #expect(
      machine.watchdog(at: at(1), active: .monitor(.tokens), on: Self.refused, anyPresent: false)
        == .apply)
    #expect(
      machine.watchdog(
        at: at(1), active: .discovery(beside: nil), on: Self.monitors, anyPresent: false)
        == .apply)
    #expect(machine.watchdogRestarts == 0)
  }

  @Test("no watchdog without a usable adapter or without a scan")
  func watchdogIdle() {
    var wished = machine(tokens: true, watchdog: .seconds(1))
    #expect(wished.watchdog(at: at(100), active: nil, on: nil, anyPresent: false) == nil)
    #expect(
      wished.watchdog(at: at(100), active: .discovery(beside: nil), on: nil, anyPresent: false)
        == nil)
    var idle = machine(watchdog: .seconds(1))
    #expect(idle.watchdog(at: at(100), active: nil, on: Self.monitors, anyPresent: false) == nil)
    #expect(wished.watchdogRestarts == 0 && idle.watchdogRestarts == 0)
  }
}
