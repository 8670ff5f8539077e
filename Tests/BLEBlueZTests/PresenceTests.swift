import Core
import BlueZTestSupport
import DBus
import Foundation
import Logging
import Testing
import TestSupport
import Tokens

@testable import BLEBlueZ
import NearbyTesting

/// A still peer or beacon, which real bluetoothd reports once and then never again
/// (docs/bluez-vm-findings.md item 10), stays present; the watchdog leaves its scan alone but
/// still restarts a stuck one. In the serialized double suite. The double sends a device at
/// RSSI 127 (`SetRSSI`, as btvirt's controllers) once, then nothing while it stays unchanged.
///
/// The rules (how long, under which scan, the grace, the monitor's restarts) are tested on
/// instants in PresenceStateMachineTests; these tests check that the engine feeds the machine
/// bluetoothd's events and performs what it decides, each waiting for what it expects.
extension BlueZDoubleTests {
  /// A peer at a constant RSSI 127 under discovery, reported once (`SetHeardOnce`: the VM's
  /// kernel passes bluetoothd one report per device object; bluetoothd keeps the object for
  /// its 30 s TemporaryTimeout): its sightings go on (RSSI unknown, item 8) long after that
  /// only report, and the watchdog (3 s here) never restarts the scan. Once the peer stops,
  /// the medium no longer holds it and the sightings stop.
  @Test(.requires(.bluezDouble)) func aStillPeerStaysPresentUnderDiscovery() async throws {
    let control = try await DoubleControl.connect()
    defer { control.close() }
    try await control.setRSSI(advertiser: "hci0", rssi: 127)
    try await control.setTemporaryTimeout(.seconds(30))
    try await control.setHeardOnce(true, gap: .milliseconds(2500))
    let speaker = try await control.medium("hci0")
    let listener = try await control.medium("hci1")
    let heard = StreamRecorder(listener.sightings)
    let token = Token.random()
    try await listener.startScanning()
    try await speaker.transmit(token)
    let first = await heard.first(since: .now - .seconds(1)) {
      $0.token == token
    }
    #expect(first != nil)
    // RSSI 127 is "not available": the sighting counts, its strength is unknown.
    #expect(first.map { $0.rssi == nil } == true)
    // Re-reported every second from the only report on: four more, past the watchdog's 3 s.
    let from = ContinuousClock.now
    #expect(
      await heard.until { _ in
        heard.elements(since: from).filter { $0.token == token }.count >= 4
      })
    #expect(heard.elements(since: from).filter { $0.token == token }.allSatisfy { $0.rssi == nil })
    #expect(await listener.engine.watchdogRestarts == 0)
    #expect(try await control.discoveryClients("hci1").count == 1)
    // The peer stops and bluetoothd lets its device go at once (no 30 s timer here): a
    // removal long before the timer could fire is the device going, and the sightings stop.
    try await control.setTemporaryTimeout(.zero)
    await speaker.stopTransmitting()
    #expect(await eventually { await listener.engine.presentDevices().isEmpty })
    let stopped = ContinuousClock.now
    #expect(
      await heard.first(since: stopped, timeout: .milliseconds(1500)) { $0.token == token } == nil)
    await speaker.shutdown()
    await listener.shutdown()
  }

  /// As in the VM's emulated air (`SetHeardOnce`): bluetoothd hears a still peer only when it
  /// creates its device, removes it TemporaryTimeout later (2 s here) although it still
  /// advertises, and creates it again at the next discovery cycle (2.5 s later here). The
  /// medium bridges the gap: it holds the removed device and reports it before bluetoothd
  /// creates it again, and the watchdog (3 s) leaves the scan alone.
  @Test(.requires(.bluezDouble)) func aStillPeerSurvivesBluetoothdDroppingItsDevice() async throws {
    let control = try await DoubleControl.connect()
    defer { control.close() }
    try await control.setRSSI(advertiser: "hci0", rssi: 127)
    try await control.setTemporaryTimeout(.seconds(2))
    try await control.setHeardOnce(true, gap: .milliseconds(2500))
    let observer = try await Client.connect(control)
    defer { observer.close() }
    let speaker = try await control.medium("hci0")
    // The medium told the double's TemporaryTimeout, as it assumes bluetoothd's default 30 s.
    var configuration = BlueZConfiguration(bus: control.bus, adapter: "hci1")
    configuration.scanWatchdog = .seconds(3)
    configuration.temporaryTimeout = .seconds(2)
    var logger = Logger(label: "test.bluez.presence")
    logger.logLevel = .warning
    let listener = try await BlueZMedium(configuration: configuration, logger: logger)
    let heard = StreamRecorder(listener.sightings)
    let token = Token.random()
    try await listener.startScanning()
    try await speaker.transmit(token)
    #expect(
      await heard.first(since: .now - .seconds(1)) { $0.token == token }
        != nil)
    // bluetoothd's timer removes the device 2 s after its only report…
    let ofListener: @Sendable (DBusMessage) -> Bool = {
      let signature = $0.member == "InterfacesAdded" ? "oa{sa{sv}}" : "oas"
      return (try? $0.arguments(signature))?.first?.objectPath?.isDescendant(of: Self.hci1) == true
    }
    let removal = await observer.signals.first() {
      $0.member == "InterfacesRemoved" && ofListener($0)
    }
    #expect(removal != nil)
    let removed = ContinuousClock.now
    // … the medium holds it, and reports it before the device comes back (2.5 s later) …
    #expect(
      await eventually() { await !listener.engine.presence.vanished.isEmpty })
    #expect(await heard.first(since: removed) { $0.token == token } != nil)
    // … which bluetoothd creates again, with no property change in between.
    #expect(
      await observer.signals.first(since: removed) {
        $0.member == "InterfacesAdded" && ofListener($0)
      } != nil)
    #expect(await listener.engine.watchdogRestarts == 0)
    await speaker.shutdown()
    await listener.shutdown()
  }

  /// The same under a quiet pattern monitor: token sightings go on while bluetoothd calls the
  /// monitor's DeviceFound for the peer's reports (our monitor sets no RSSI property, item F),
  /// and the watchdog leaves the monitor alone.
  @Test(.requires(.bluezDouble)) func aStillPeerStaysPresentUnderAMonitor() async throws {
    let control = try await DoubleControl.connect()
    defer { control.close() }
    try await control.setMonitorSupport("hci1", true)
    try await control.setQuietMonitors(true)
    let speaker = try await control.medium("hci0")
    let listener = try await control.medium("hci1")
    let heard = StreamRecorder(listener.sightings)
    let token = Token.random()
    try await listener.startScanning()
    try await speaker.transmit(token)
    #expect(
      await heard.first(since: .now - .seconds(1)) { $0.token == token }
        != nil)
    // Re-reported every second: four more, past the watchdog's 3 s.
    let from = ContinuousClock.now
    #expect(
      await heard.until { _ in
        heard.elements(since: from).filter { $0.token == token }.count >= 4
      })
    #expect(await listener.engine.watchdogRestarts == 0)
    await speaker.shutdown()
    await listener.shutdown()
  }

  /// As in the VM's emulated air under a monitor (`SetHeardOnce`): the controller reports a
  /// still peer's advert once per scan start, so bluetoothd calls the monitor's DeviceFound
  /// once (our monitor sets no RSSI property: one call per report) and then nothing. The medium
  /// restarts its monitor once the peer has been silent for 4/10 of `monitorLostAfter` (3 s
  /// here), hears it again, and keeps it present well past `monitorLostAfter`; once the peer
  /// stops, its sightings end about `monitorLostAfter` later (docs/bluez-vm-findings.md
  /// item F).
  @Test(.requires(.bluezDouble)) func aStillPeerStaysPresentUnderAMonitorThatHearsItOncePerScan()
    async throws
  {
    let control = try await DoubleControl.connect()
    defer { control.close() }
    try await control.setMonitorSupport("hci1", true)
    try await control.setQuietMonitors(true)
    try await control.setRSSI(advertiser: "hci0", rssi: 127)
    try await control.setTemporaryTimeout(.seconds(3))
    try await control.setHeardOnce(true, gap: .milliseconds(2500))
    let speaker = try await control.medium("hci0")
    var configuration = BlueZConfiguration(bus: control.bus, adapter: "hci1")
    configuration.scanWatchdog = .seconds(3)
    configuration.temporaryTimeout = .seconds(3)
    configuration.monitorLostAfter = .seconds(3)
    var logger = Logger(label: "test.bluez.presence")
    logger.logLevel = .warning
    let listener = try await BlueZMedium(configuration: configuration, logger: logger)
    let heard = StreamRecorder(listener.sightings)
    let token = Token.random()
    try await listener.startScanning()
    try await speaker.transmit(token)
    #expect(
      await heard.first(since: .now - .seconds(1)) { $0.token == token }
        != nil)
    let from = ContinuousClock.now
    // Three restarts (one every 1.2 s at most) bring the peer back each time.
    #expect(await eventually { await listener.engine.monitorRefreshes >= 3 })
    let times = heard.elements(since: from).filter { $0.token == token }.map(\.time)
    #expect(times.count >= 3)
    let longestPause = zip(times, times.dropFirst()).map { $1.timeIntervalSince($0) }.max() ?? 99
    #expect(longestPause < 2)
    #expect(try await control.discoveryClients("hci1").isEmpty)

    await speaker.stopTransmitting()
    #expect(await eventually { await listener.engine.presentDevices().isEmpty })
    let quiet = ContinuousClock.now
    #expect(
      await heard.first(since: quiet, timeout: .milliseconds(1500)) { $0.token == token } == nil)
    await speaker.shutdown()
    await listener.shutdown()
  }

  /// A stuck scan among still devices is still restarted: its adapter hears nothing, so
  /// bluetoothd (here with a 1 s TemporaryTimeout) removes the devices, the medium holds
  /// nothing present, and the watchdog (3 s) restarts discovery, which hears the peer again.
  @Test(.requires(.bluezDouble)) func aStuckScanAmongStillDevicesIsRestarted() async throws {
    let control = try await DoubleControl.connect()
    defer { control.close() }
    try await control.setRSSI(advertiser: "hci0", rssi: 127)
    try await control.setTemporaryTimeout(.seconds(1))
    let speaker = try await control.medium("hci0")
    let listener = try await control.medium("hci1")
    let heard = StreamRecorder(listener.sightings)
    let token = Token.random()
    try await listener.startScanning()
    try await speaker.transmit(token)
    #expect(
      await heard.first(since: .now - .seconds(1)) { $0.token == token }
        != nil)
    try await control.stallDiscovery("hci1")
    #expect(await eventually(timeout: .seconds(10)) { await listener.engine.watchdogRestarts == 1 })
    let restarted = ContinuousClock.now
    #expect(await heard.first(since: restarted) { $0.token == token } != nil)
    await speaker.shutdown()
    await listener.shutdown()
  }

  /// Item 11: an invalidated RSSI (the third argument of PropertiesChanged) is unknown, not
  /// the last value, and the device no longer counts as heard by discovery.
  @Test func anInvalidatedRSSIIsUnknown() {
    let now = NearbyClock.Instant(offset: .seconds(100))
    var device = DeviceState(at: now)
    _ = device.apply(["RSSI": .int16(-60), "ServiceData": .vardict([:])], at: now)
    #expect(device.rssi == -60 && device.heard)
    device.invalidate(["RSSI"])
    #expect(device.rssi == nil && !device.heard)
    _ = device.apply(["RSSI": .int16(127)], at: now)
    #expect(device.rssi == nil && device.heard)
  }

  static let hci1 = try! DBusObjectPath("/org/bluez/hci1")
}
