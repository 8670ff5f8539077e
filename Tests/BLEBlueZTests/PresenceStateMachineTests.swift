import Core
import DBus
import Testing

@testable import BLEBlueZ

/// The presence rules on instants: no bluetoothd, no double, no sleeping. Each test plays what
/// bluetoothd and our monitor report at `start + n` seconds and checks which devices the
/// medium holds present and what it does.
@Suite("Presence, decided on instants")
struct PresenceStateMachineTests: DecidedOnInstants {
  typealias Machine = PresenceStateMachine
  let start = NearbyClock.Instant(offset: .seconds(100))

  static let monitor = ScanPlan.monitor(.tokens)
  static let beside = ScanPlan.discovery(beside: .tokens)
  static let discovery = ScanPlan.discovery(beside: nil)

  /// A device whose last advertising report (an RSSI) arrived at `heardAt`.
  func device(
    heardAt seconds: Double, rssi: Int16 = -60, kept: Bool = false,
    adapter: DBusObjectPath = PresenceStateMachineTests.adapter
  ) -> DeviceState {
    var device = DeviceState(at: start)
    _ = device.apply(
      ["Adapter": .objectPath(adapter), "RSSI": .int16(rssi), "Paired": .boolean(kept)],
      at: at(seconds))
    return device
  }

  func paths(
    _ machine: Machine, at seconds: Double, scan: ScanPlan?,
    devices: [DBusObjectPath: DeviceState]
  ) -> [DBusObjectPath] {
    machine.present(at: at(seconds), scan: scan, adapter: Self.adapter, devices: devices)
      .map(\.path)
  }

  // MARK: Under a pattern monitor

  @Test("under a monitor a device is present until monitorLostAfter after its last report")
  func monitorHoldsUntilLostAfter() {
    var machine = Machine(configuration: .init(monitorLostAfter: .seconds(10)))
    let devices = [Self.path: device(heardAt: -100)]
    _ = machine.monitorFound(Self.path, device: devices[Self.path], scan: Self.monitor, at: at(0))
    #expect(paths(machine, at: 0, scan: Self.monitor, devices: devices) == [Self.path])
    #expect(paths(machine, at: 9.999, scan: Self.monitor, devices: devices) == [Self.path])
    // The deadline itself is past.
    #expect(paths(machine, at: 10, scan: Self.monitor, devices: devices).isEmpty)
    // A report long ago (bluetoothd's last PropertiesChanged) does not count under a monitor.
    #expect(paths(machine, at: 11, scan: Self.monitor, devices: devices).isEmpty)
  }

  @Test("a device new to the monitor is reported at once, a repeat not, a returning one again")
  func monitorReportsNewDevicesAtOnce() {
    var machine = Machine(configuration: .init(monitorLostAfter: .seconds(10)))
    let known = device(heardAt: 0)
    let present = Machine.Present(path: Self.path, device: known)
    #expect(
      machine.monitorFound(Self.path, device: known, scan: Self.monitor, at: at(0))
        == [.report([present])])
    #expect(machine.monitorFound(Self.path, device: known, scan: Self.monitor, at: at(3)).isEmpty)
    #expect(machine.monitorFound(Self.path, device: known, scan: Self.monitor, at: at(3)).isEmpty)
    // Exactly monitorLostAfter after the last report: it was lost, so it is new again.
    #expect(
      machine.monitorFound(Self.path, device: known, scan: Self.monitor, at: at(13))
        == [.report([present])])
  }

  @Test("a monitor report reports nothing at once beside discovery or for an unknown device")
  func monitorReportsNothingElsewhere() {
    var machine = Machine()
    let known = device(heardAt: 0)
    #expect(machine.monitorFound(Self.path, device: known, scan: Self.beside, at: at(0)).isEmpty)
    #expect(
      machine.monitorFound(Self.other, device: known, scan: Self.discovery, at: at(0)).isEmpty)
    #expect(
      machine.monitorFound(Self.elsewhere, device: nil, scan: Self.monitor, at: at(0)).isEmpty)
    #expect(machine.monitorFound(Self.path, device: known, scan: nil, at: at(0)).isEmpty)
    // Still recorded: present once the monitor scans and bluetoothd has the object.
    #expect(paths(machine, at: 1, scan: Self.monitor, devices: [Self.path: known]) == [Self.path])
  }

  @Test("monitor reports out of order keep the latest instant")
  func monitorReportsOutOfOrder() {
    var machine = Machine(configuration: .init(monitorLostAfter: .seconds(10)))
    let devices = [Self.path: device(heardAt: 0)]
    _ = machine.monitorFound(Self.path, device: devices[Self.path], scan: Self.monitor, at: at(5))
    #expect(
      machine.monitorFound(Self.path, device: devices[Self.path], scan: Self.monitor, at: at(2))
        .isEmpty)
    #expect(machine.monitorHeard[Self.path] == at(5))
    #expect(paths(machine, at: 14.9, scan: Self.monitor, devices: devices) == [Self.path])
    #expect(paths(machine, at: 15, scan: Self.monitor, devices: devices).isEmpty)
  }

  @Test("DeviceLost, or bluetoothd dropping the object, ends presence under a monitor at once")
  func monitorLostAndRemoved() {
    var machine = Machine()
    let devices = [Self.path: device(heardAt: 0), Self.other: device(heardAt: 0)]
    _ = machine.monitorFound(Self.path, device: devices[Self.path], scan: Self.monitor, at: at(0))
    _ = machine.monitorFound(Self.other, device: devices[Self.other], scan: Self.monitor, at: at(0))
    #expect(paths(machine, at: 1, scan: Self.monitor, devices: devices) == [Self.path, Self.other])
    machine.monitorLost(Self.path)
    machine.monitorLost(Self.path)  // repeated: nothing more
    #expect(paths(machine, at: 1, scan: Self.monitor, devices: devices) == [Self.other])
    // The object is gone (the beacon stopped): not present, and never held under a monitor.
    let held = machine.deviceRemoved(
      Self.other, device: devices[Self.other]!, scan: Self.monitor, adapter: Self.adapter,
      at: at(1))
    #expect(!held)
    #expect(paths(machine, at: 1, scan: Self.monitor, devices: [:]).isEmpty)
  }

  @Test("a device silent for 4/10 of monitorLostAfter asks for a monitor restart, once a period")
  func silentDevicesRestartTheMonitor() {
    var machine = Machine(configuration: .init(monitorLostAfter: .seconds(10)))
    let refreshAfter = machine.configuration.monitorRefreshAfter
    #expect(refreshAfter == .seconds(4))
    let devices = [Self.path: device(heardAt: 0)]
    _ = machine.monitorFound(Self.path, device: devices[Self.path], scan: Self.monitor, at: at(0))
    func restarts(_ seconds: Double) -> Bool {
      machine.tick(at: at(seconds), scan: Self.monitor, adapter: Self.adapter, devices: devices)
        .contains(.restartMonitor)
    }
    #expect(!restarts(3.999))
    #expect(restarts(4))  // silent exactly 4/10 of monitorLostAfter
    #expect(restarts(4))  // asked again until the engine says it restarted
    machine.monitorRestarted(at: at(4))
    #expect(machine.monitorRefreshes == 1)
    #expect(!restarts(6))  // still silent, but restarted 2 s ago
    #expect(!restarts(7.999))
    #expect(restarts(8))  // a period after the last restart
    machine.monitorRestarted(at: at(8))
    // Silent for monitorLostAfter: gone, nothing to hear again.
    #expect(!restarts(12))
    #expect(
      machine.tick(at: at(12), scan: Self.monitor, adapter: Self.adapter, devices: devices)
        .isEmpty)
  }

  @Test("no monitor restart outside a monitor scan, nor without silent devices")
  func noRestartElsewhere() {
    var machine = Machine(configuration: .init(monitorLostAfter: .seconds(10)))
    let devices = [Self.path: device(heardAt: 0)]
    #expect(!machine.shouldRestartMonitor(at: at(5), scan: Self.monitor))
    _ = machine.monitorFound(Self.path, device: devices[Self.path], scan: Self.beside, at: at(0))
    for scan in [nil, Self.beside, Self.discovery] {
      #expect(!machine.shouldRestartMonitor(at: at(5), scan: scan))
    }
    #expect(machine.shouldRestartMonitor(at: at(5), scan: Self.monitor))
    // Heard again: not silent.
    _ = machine.monitorFound(Self.path, device: devices[Self.path], scan: Self.monitor, at: at(5))
    #expect(!machine.shouldRestartMonitor(at: at(5), scan: Self.monitor))
  }

  /// The VM's emulated air under a monitor (docs/bluez-vm-findings.md item F): the monitor
  /// hears a still peer once per scan start. Restarting it when the peer is silent keeps the
  /// peer present and reported every second with no pause; once it stops advertising, it goes
  /// monitorLostAfter after its last report. (Was PresenceTests'
  /// aStillPeerStaysPresentUnderAMonitorThatHearsItOncePerScan, 8 s of sleeping.)
  @Test("a peer heard once per monitor start stays present, then goes monitorLostAfter later")
  func heardOncePerScanScenario() {
    var machine = Machine(configuration: .init(monitorLostAfter: .seconds(3)))
    let devices = [Self.path: device(heardAt: 0, rssi: 127)]
    _ = machine.monitorFound(Self.path, device: devices[Self.path], scan: Self.monitor, at: at(0))
    var reported: [Double] = []
    for tick in 1...9 {
      let now = Double(tick)
      let actions = machine.tick(
        at: at(now), scan: Self.monitor, adapter: Self.adapter, devices: devices)
      if actions.contains(.report([Machine.Present(path: Self.path, device: devices[Self.path]!)]))
      {
        reported.append(now)
      }
      if actions.contains(.restartMonitor) {
        machine.monitorRestarted(at: at(now))
        // The controller reports the still advert once at the new scan's start.
        _ = machine.monitorFound(
          Self.path, device: devices[Self.path], scan: Self.monitor, at: at(now + 0.1))
      }
    }
    #expect(reported == (1...9).map(Double.init))
    #expect(machine.monitorRefreshes >= 3)
    // The peer stops advertising: the restarts bring nothing more, and it goes monitorLostAfter
    // after its last report.
    let last = machine.monitorHeard[Self.path]!
    #expect(last > at(7))
    let lost = last + .seconds(3)
    #expect(
      machine.present(
        at: lost - .milliseconds(1), scan: Self.monitor, adapter: Self.adapter,
        devices: devices
      ).map(\.path) == [Self.path])
    for later in [lost, lost + .seconds(1), lost + .seconds(10)] {
      #expect(
        machine.present(at: later, scan: Self.monitor, adapter: Self.adapter, devices: devices)
          .isEmpty)
      #expect(
        machine.tick(at: later, scan: Self.monitor, adapter: Self.adapter, devices: devices)
          .isEmpty)
    }
  }

  // MARK: Discovery with our monitor beside it

  @Test("beside a monitor, a device is present for 25 s after its last report, data or monitor")
  func besideHoldsAfterTheLastReport() {
    var machine = Machine(configuration: .init(monitorLostAfter: .seconds(10)))
    #expect(machine.configuration.reportedDiscoveryHold == .seconds(25))
    let devices = [Self.path: device(heardAt: 0)]
    #expect(paths(machine, at: 24.999, scan: Self.beside, devices: devices) == [Self.path])
    #expect(paths(machine, at: 25, scan: Self.beside, devices: devices).isEmpty)
    // The monitor's DeviceFound at 10 extends it; the monitor's own rule (10 s) does not apply.
    _ = machine.monitorFound(Self.path, device: devices[Self.path], scan: Self.beside, at: at(10))
    // The periodic clean-up keeps monitor reports as long as this rule reads them.
    _ = machine.tick(at: at(30), scan: Self.beside, adapter: Self.adapter, devices: devices)
    #expect(paths(machine, at: 34.999, scan: Self.beside, devices: devices) == [Self.path])
    #expect(paths(machine, at: 35, scan: Self.beside, devices: devices).isEmpty)
  }

  @Test("beside a monitor, an unheard device or one on another adapter is not present")
  func besideNeedsAHeardDeviceOnTheAdapter() {
    let machine = Machine()
    var unheard = device(heardAt: 0)
    unheard.invalidate(["RSSI"])
    let devices = [
      Self.path: unheard,
      Self.elsewhere: device(heardAt: 0, adapter: try! .init("/org/bluez/hci0")),
    ]
    #expect(paths(machine, at: 1, scan: Self.beside, devices: devices).isEmpty)
    #expect(machine.present(at: at(1), scan: Self.beside, adapter: nil, devices: devices).isEmpty)
  }

  // MARK: Discovery alone

  @Test("under discovery alone a heard device is present for as long as bluetoothd keeps it")
  func discoveryHoldsWhatBluetoothdKeeps() {
    let machine = Machine(configuration: .init(temporaryTimeout: .seconds(30)))
    var unheard = device(heardAt: 0)
    unheard.invalidate(["RSSI"])  // discovery stopped: bluetoothd invalidates, then removes
    let devices = [
      Self.path: device(heardAt: 0, rssi: 127),  // a still peer, reported once
      Self.other: unheard,
      Self.elsewhere: device(heardAt: 0, adapter: try! .init("/org/bluez/hci0")),
    ]
    for seconds in [0.0, 4, 29.999, 30, 1000] {
      #expect(paths(machine, at: seconds, scan: Self.discovery, devices: devices) == [Self.path])
    }
    #expect(paths(machine, at: 1, scan: nil, devices: devices).isEmpty)
  }

  @Test("a device bluetoothd keeps for good counts only temporaryTimeout after its last report")
  func keptDevicesExpire() {
    let machine = Machine(configuration: .init(temporaryTimeout: .seconds(30)))
    let devices = [Self.path: device(heardAt: 0, kept: true)]
    #expect(paths(machine, at: 29.999, scan: Self.discovery, devices: devices) == [Self.path])
    #expect(paths(machine, at: 30, scan: Self.discovery, devices: devices).isEmpty)
  }

  @Test("a removal by bluetoothd's timer holds the device for the grace, not at its end")
  func timerRemovalHoldsForTheGrace() {
    var machine = Machine(configuration: .init(temporaryTimeout: .seconds(30)))
    #expect(machine.configuration.rediscoveryGrace == .seconds(12))
    let removed = device(heardAt: 0)
    // Exactly 3/4 of the TemporaryTimeout after its last report: the timer.
    let held = machine.deviceRemoved(
      Self.path, device: removed, scan: Self.discovery, adapter: Self.adapter, at: at(22.5))
    #expect(held)
    #expect(paths(machine, at: 22.5, scan: Self.discovery, devices: [:]) == [Self.path])
    #expect(paths(machine, at: 34.499, scan: Self.discovery, devices: [:]) == [Self.path])
    let tick = machine.tick(
      at: at(34.499), scan: Self.discovery, adapter: Self.adapter, devices: [:])
    #expect(tick == [.report([Machine.Present(path: Self.path, device: removed)])])
    #expect(paths(machine, at: 34.5, scan: Self.discovery, devices: [:]).isEmpty)
    #expect(
      machine.tick(at: at(34.5), scan: Self.discovery, adapter: Self.adapter, devices: [:])
        .isEmpty)
    #expect(machine.vanished.isEmpty)
  }

  @Test("a removal sooner than 3/4 of the TemporaryTimeout is the device going: not held")
  func earlyRemovalIsTheDeviceGoing() {
    var machine = Machine(configuration: .init(temporaryTimeout: .seconds(30)))
    let held = machine.deviceRemoved(
      Self.path, device: device(heardAt: 0), scan: Self.discovery, adapter: Self.adapter,
      at: at(22.499))
    #expect(!held)
    #expect(paths(machine, at: 22.5, scan: Self.discovery, devices: [:]).isEmpty)
    // A peer that stops, removed by bluetoothd 0.4 s after its last report: gone at once.
    let heldAfterStop = machine.deviceRemoved(
      Self.path, device: device(heardAt: 0), scan: Self.discovery, adapter: Self.adapter,
      at: at(0.4))
    #expect(!heldAfterStop)
    #expect(paths(machine, at: 0.4, scan: Self.discovery, devices: [:]).isEmpty)
  }

  @Test("no hold under a monitor or beside one, for a kept, unheard or other adapter's device")
  func removalsNotHeld() {
    var machine = Machine(configuration: .init(temporaryTimeout: .seconds(30)))
    var unheard = device(heardAt: 0)
    unheard.invalidate(["RSSI"])
    let cases: [(DBusObjectPath, DeviceState, ScanPlan?, DBusObjectPath?)] = [
      (Self.path, device(heardAt: 0), Self.monitor, Self.adapter),
      (Self.path, device(heardAt: 0), Self.beside, Self.adapter),
      (Self.path, device(heardAt: 0), nil, Self.adapter),
      (Self.path, device(heardAt: 0, kept: true), Self.discovery, Self.adapter),
      (Self.path, unheard, Self.discovery, Self.adapter),
      (
        Self.elsewhere, device(heardAt: 0, adapter: try! .init("/org/bluez/hci0")),
        Self.discovery, Self.adapter
      ),
      (Self.path, device(heardAt: 0), Self.discovery, nil),
    ]
    for (path, device, scan, adapter) in cases {
      let held = machine.deviceRemoved(
        path, device: device, scan: scan, adapter: adapter, at: at(40))
      #expect(!held)
    }
    #expect(machine.vanished.isEmpty)
  }

  @Test("a held device created again, a scan stop or a new bluetoothd ends the hold")
  func holdEnds() {
    var machine = Machine(configuration: .init(temporaryTimeout: .seconds(30)))
    let old = device(heardAt: 0)
    func remove() {
      machine.deviceRemoved(
        Self.path, device: old, scan: Self.discovery, adapter: Self.adapter, at: at(30))
    }
    remove()
    // bluetoothd creates it again: present once, as bluetoothd has it now.
    let again = device(heardAt: 31)
    #expect(
      machine.present(
        at: at(31), scan: Self.discovery, adapter: Self.adapter, devices: [Self.path: again])
        == [Machine.Present(path: Self.path, device: again)])
    machine.deviceChanged(Self.path)
    machine.deviceChanged(Self.path)
    #expect(machine.vanished.isEmpty)
    remove()
    machine.scanStopped()
    #expect(paths(machine, at: 31, scan: Self.discovery, devices: [:]).isEmpty)
    remove()
    _ = machine.monitorFound(Self.other, device: nil, scan: Self.monitor, at: at(30))
    machine.reset()
    #expect(machine.vanished.isEmpty && machine.monitorHeard.isEmpty)
  }

  /// The VM's emulated air under discovery (findings item G): bluetoothd hears a still peer
  /// only when it creates its device, removes it TemporaryTimeout (2 s here) later although it
  /// still advertises, and creates it again 2.5 s after that. The grace bridges the gap: the
  /// peer is reported at every tick. (Was PresenceTests'
  /// aStillPeerSurvivesBluetoothdDroppingItsDevice, 8 s of sleeping.)
  @Test("a still peer that bluetoothd drops and creates again is reported at every tick")
  func droppedAndCreatedAgainScenario() {
    var machine = Machine(configuration: .init(temporaryTimeout: .seconds(2)))
    var devices: [DBusObjectPath: DeviceState] = [:]
    var created = 0.0
    devices[Self.path] = device(heardAt: created, rssi: 127)
    var reported: [Double] = []
    for step in 1...160 {  // every 50 ms for 8 s
      let now = Double(step) * 0.05
      if let heard = devices[Self.path], now - created >= 2 {
        devices[Self.path] = nil  // the timer, 2 s after its only report
        machine.deviceRemoved(
          Self.path, device: heard, scan: Self.discovery, adapter: Self.adapter, at: at(now))
      } else if devices[Self.path] == nil, now - created >= 4.5 {
        created = now
        machine.deviceChanged(Self.path)
        devices[Self.path] = device(heardAt: now, rssi: 127)
      }
      if step % 20 == 0 {  // the engine's tick, every second
        let actions = machine.tick(
          at: at(now), scan: Self.discovery, adapter: Self.adapter, devices: devices)
        if case .report(let present)? = actions.first, present.map(\.path) == [Self.path] {
          reported.append(now)
        }
      }
    }
    #expect(reported == (1...8).map(Double.init))
  }
}
