import BLEBlueZ
import Core
import DBus
import Foundation
import Logging
import TestSupport
import Testing
import Tokens
import NearbyTesting

/// The BlueZ medium against the REAL bluetoothd when the stack under it goes away and comes
/// back (issue 17): bluetoothd stopped and started again (SIGTERM, and SIGKILL: a crash that
/// leaves the kernel's adverts and scans behind), and both of btvirt's controllers removed and
/// added again (btvirt restarted: bluetoothd sends `InterfacesRemoved` of /org/bluez/hci0 and
/// hci1, then publishes new ones). Each time the medium must advertise and scan again by
/// itself: the app does nothing after its first `transmit` or `startScanning`.
///
/// Advertising is on hci0 and scanning on hci1 (an adapter that scans cannot start its first
/// advert on the real kernel, docs/bluez-vm-findings.md item D). The medium that lives through
/// the restart is checked with a peer made after it: a fresh scanner on hci1 for the advert, a
/// fresh advertiser on hci0 for the scan, so a failure names the side that did not resume.
///
/// The stack is shared with the other BLEBlueZVM tests: each test shuts its mediums down and
/// brings the stack back (`control.sh ensure`: bluetoothd running, hci0 and hci1 powered),
/// even when it fails.
@Suite(.serialized, .requires(.bluezVM)) struct RealBlueZRestartTests {
  /// How long bluetoothd and btvirt may take to come back, and a peer to be heard, under TCG.
  static let comeBack = Duration.seconds(45)
  static let hear = Duration.seconds(25)

  @Test(arguments: ["TERM", "KILL"])
  func advertResumesAfterBluetoothdRestarts(signal: String) async throws {
    try await VMRig.run { rig in
      let speaker = try await rig.medium("hci0")
      let statuses = StreamRecorder(speaker.statusUpdates)
      let token = Token.random()
      try await speaker.transmit(token)
      try await rig.expectHeard(token, on: "hci1", "before the restart")

      try await rig.control("stop-bluetoothd", signal)
      #expect(
        await statuses.until(timeout: Self.comeBack) {
          if case .unavailable = $0.last { true } else { false }
        }, "the medium did not report bluetoothd gone: \(statuses.elements)")
      try await rig.control("start-bluetoothd")
      #expect(
        await statuses.until(timeout: Self.comeBack) { $0.last == .ready },
        "the medium did not report ready again: \(statuses.elements)")
      try await rig.expectHeard(token, on: "hci1", "after bluetoothd came back (SIG\(signal))")
      // Heard from the medium's new registration, not from an advert the old daemon left in
      // the kernel: the new bluetoothd counts exactly one advert on hci0 (two would mean the
      // medium registered twice).
      #expect(await rig.activeInstancesReach("hci0", 1))
    }
  }

  @Test(arguments: ["TERM", "KILL"])
  func scanResumesAfterBluetoothdRestarts(signal: String) async throws {
    try await VMRig.run { rig in
      let listener = try await rig.medium("hci1")
      let heard = StreamRecorder(listener.sightings)
      let statuses = StreamRecorder(listener.statusUpdates)
      try await listener.startScanning()
      try await rig.expectHears(heard, from: "hci0", "before the restart")

      try await rig.control("restart-bluetoothd", signal)
      #expect(
        await statuses.until(timeout: Self.comeBack) { $0.last == .ready },
        "the medium did not report ready again: \(statuses.elements)")
      #expect(
        statuses.elements.contains { if case .unavailable = $0 { true } else { false } },
        "the medium never reported bluetoothd gone: \(statuses.elements)")
      try await rig.expectHears(heard, from: "hci0", "after bluetoothd came back (SIG\(signal))")
    }
  }

  @Test func advertResumesWhenTheAdapterComesBack() async throws {
    try await VMRig.run { rig in
      let speaker = try await rig.medium("hci0")
      let statuses = StreamRecorder(speaker.statusUpdates)
      let token = Token.random()
      try await speaker.transmit(token)
      try await rig.expectHeard(token, on: "hci1", "before the adapter went away")

      try await rig.control("remove-adapters")
      #expect(
        await statuses.until(timeout: Self.comeBack) { $0.last == .poweredOff },
        "the medium did not report its adapter gone: \(statuses.elements)")
      try await rig.control("add-adapters")
      #expect(
        await statuses.until(timeout: Self.comeBack) { $0.last == .ready },
        "the medium did not report ready again: \(statuses.elements)")
      try await rig.expectHeard(token, on: "hci1", "after the adapter came back")
      #expect(await rig.activeInstancesReach("hci0", 1))
    }
  }

  @Test func scanResumesWhenTheAdapterComesBack() async throws {
    try await VMRig.run { rig in
      let listener = try await rig.medium("hci1")
      let heard = StreamRecorder(listener.sightings)
      let statuses = StreamRecorder(listener.statusUpdates)
      try await listener.startScanning()
      try await rig.expectHears(heard, from: "hci0", "before the adapter went away")

      try await rig.control("remove-adapters")
      #expect(
        await statuses.until(timeout: Self.comeBack) { $0.last == .poweredOff },
        "the medium did not report its adapter gone: \(statuses.elements)")
      try await rig.control("add-adapters")
      #expect(
        await statuses.until(timeout: Self.comeBack) { $0.last == .ready },
        "the medium did not report ready again: \(statuses.elements)")
      try await rig.expectHears(heard, from: "hci0", "after the adapter came back")
    }
  }
}

/// One test's use of the VM's stack: the mediums it made (shut down at its end) and
/// `control.sh` (Tools/scripts/bluez-vm), which stops and starts bluetoothd and btvirt as the
/// boot did.
final class VMRig: Sendable {
  struct ControlFailed: Error, CustomStringConvertible {
    var description: String
  }

  private let made = MediumList()

  /// Runs `body`, then shuts its mediums down and brings the stack back (bluetoothd running,
  /// hci0 and hci1 powered) whether it passed or not; a failure to bring it back fails the test.
  static func run(_ body: (VMRig) async throws -> Void) async throws {
    try RealBlueZ.requireVM()
    let rig = VMRig()
    var failure: (any Error)?
    do { try await body(rig) } catch { failure = error }
    for medium in await rig.made.all { await medium.shutdown() }
    try await rig.control("ensure")
    if let failure { throw failure }
  }

  func medium(_ adapter: String) async throws -> BlueZMedium {
    // Debug logs (to the test's output, command.out in the VM's results): what the medium
    // did when a restart goes wrong.
    var configuration = BlueZConfiguration(bus: .system, adapter: adapter)
    configuration.scanWatchdog = .seconds(30)
    var logger = Logger(label: "vm.restart.\(adapter)")
    logger.logLevel = .debug
    let medium = try await BlueZMedium(configuration: configuration, logger: logger)
    await made.add(medium)
    return medium
  }

  /// Runs `control.sh COMMAND…` in the VM; throws with its output when it fails.
  func control(_ arguments: String...) async throws {
    guard let script = ProcessInfo.processInfo.environment["NEARBY_BLUEZ_VM_CONTROL"] else {
      throw ControlFailed(description: "NEARBY_BLUEZ_VM_CONTROL is not set (guest.sh sets it)")
    }
    let result = try await ChildProcess.run(
      URL(fileURLWithPath: script), arguments, combineOutput: true, timeout: 180)
    guard result.status == 0 else {
      throw ControlFailed(
        description: "control.sh \(arguments.joined(separator: " ")) exited \(result.status): "
          + result.outText)
    }
  }

  /// Whether bluetoothd's `LEAdvertisingManager1.ActiveInstances` on `adapter` is (or
  /// becomes, within 10 s) `count`.
  func activeInstancesReach(_ adapter: String, _ count: Int) async -> Bool {
    guard let bus = try? await DBusConnection(.system) else { return false }
    defer { bus.close() }
    var last: Int?
    let reached = await eventually(timeout: .seconds(10), interval: .milliseconds(200)) {
      last = try? await bus.property(
        "ActiveInstances", interface: "org.bluez.LEAdvertisingManager1", of: "org.bluez",
        at: DBusObjectPath("/org/bluez/\(adapter)")
      ).integer.map(Int.init)
      return last == count
    }
    if !reached {
      Issue.record(
        "ActiveInstances of \(adapter) is \(last.map(String.init) ?? "unreadable"), not \(count)")
    }
    return reached
  }

  /// A scanner made now on `adapter` hears `token` (the advert of a medium made earlier).
  func expectHeard(
    _ token: Token, on adapter: String, _ when: String,
    sourceLocation: SourceLocation = #_sourceLocation
  ) async throws {
    let listener = try await medium(adapter)
    let heard = StreamRecorder(listener.sightings)
    let start = ContinuousClock.now
    try await listener.startScanning()
    let sighting = await heard.first(since: start, timeout: RealBlueZRestartTests.hear) {
      $0.token == token
    }
    #expect(
      sighting != nil, "a fresh scanner on \(adapter) did not hear the advert \(when)",
      sourceLocation: sourceLocation)
    await listener.shutdown()
  }

  /// `heard` (the sightings of a medium made earlier) gets a new token that an advertiser made
  /// now on `adapter` transmits.
  func expectHears(
    _ heard: StreamRecorder<Sighting>, from adapter: String, _ when: String,
    sourceLocation: SourceLocation = #_sourceLocation
  ) async throws {
    let speaker = try await medium(adapter)
    let token = Token.random()
    let start = ContinuousClock.now
    try await speaker.transmit(token)
    let sighting = await heard.first(since: start, timeout: RealBlueZRestartTests.hear) {
      $0.token == token
    }
    #expect(
      sighting != nil, "the scan did not hear a fresh advert from \(adapter) \(when)",
      sourceLocation: sourceLocation)
    await speaker.shutdown()
  }
}

/// The mediums a test made, to shut down at its end.
private actor MediumList {
  var all: [BlueZMedium] = []
  func add(_ medium: BlueZMedium) { all.append(medium) }
}
