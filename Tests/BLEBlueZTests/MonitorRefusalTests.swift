import BlueZTestSupport
import DBus
import Foundation
import Logging
import Testing
import TestSupport
import Tokens

@testable import BLEBlueZ
import NearbyTesting

/// A pattern monitor the kernel refuses (docs/bluez-vm-findings.md item L): bluetoothd answers
/// `RegisterMonitor`, then calls `Release` and keeps the app, so that a second registration
/// gets `AlreadyExists` (the double's `RefuseMonitors` does the same). In the serialized double
/// suite.
extension BlueZDoubleTests {
  /// A medium scanning on hci1 with the given fallback, and a peer on hci0 transmitting.
  private func refusalSetup(
    _ control: DoubleControl, fallback: Duration
  ) async throws -> (listener: BlueZMedium, speaker: BlueZMedium, token: Token) {
    try await control.setMonitorSupport("hci1", true)
    let speaker = try await control.medium("hci0")
    var configuration = BlueZConfiguration(bus: control.bus, adapter: "hci1")
    configuration.scanWatchdog = .seconds(3)
    configuration.monitorRefusalFallback = fallback
    var logger = Logger(label: "test.bluez.refusal")
    logger.logLevel = .error
    let listener = try await BlueZMedium(configuration: configuration, logger: logger)
    let token = Token.random()
    try await speaker.transmit(token)
    return (listener, speaker, token)
  }

  /// Refused once: the medium unregisters the app bluetoothd kept, registers again after a
  /// back-off, and hears the peer through the monitor; no discovery session.
  @Test(.requires(.bluezDouble)) func aMonitorRefusedOnceIsRegisteredAgain() async throws {
    let control = try await DoubleControl.connect()
    defer { control.close() }
    let (listener, speaker, token) = try await refusalSetup(control, fallback: .seconds(60))
    try await control.refuseMonitors(adapter: "hci1", count: 1)
    let heard = StreamRecorder(listener.sightings)
    try await listener.startScanning()
    #expect(
      await heard.first(since: .now - .seconds(1), timeout: .seconds(8)) { $0.token == token }
        != nil)
    #expect(try await control.monitors("hci1").count == 1)
    #expect(try await control.discoveryClients("hci1").isEmpty)
    #expect(await listener.engine.monitorRefusal.refusals == 0)
    #expect(await listener.engine.monitorsRefused == false)
    await speaker.shutdown()
    await listener.shutdown()
  }

  /// Refused three times in a row: the medium scans with discovery (and hears the peer) for
  /// `monitorRefusalFallback`, then tries a monitor again, which the adapter now takes.
  @Test(.requires(.bluezDouble)) func anAdapterThatKeepsRefusingMonitorsIsScannedWithDiscovery()
    async throws
  {
    let control = try await DoubleControl.connect()
    defer { control.close() }
    let (listener, speaker, token) = try await refusalSetup(control, fallback: .seconds(6))
    try await control.refuseMonitors(adapter: "hci1", count: 3)
    let heard = StreamRecorder(listener.sightings)
    try await listener.startScanning()
    // Refusals after 0, 1 and 2 s of back-off: discovery within about 4 s.
    #expect(
      await eventually(timeout: .seconds(10), interval: .milliseconds(50)) {
        (try? await control.discoveryClients("hci1").count) == 1
      })
    #expect(await listener.engine.monitorsRefused)
    #expect(try await control.monitors("hci1").isEmpty)
    let underDiscovery = ContinuousClock.now
    #expect(
      await heard.first(since: underDiscovery) { $0.token == token } != nil)
    // The fallback ends: a monitor again (the watchdog applies the plan, every second here),
    // discovery stopped, the peer still heard.
    #expect(
      await eventually(timeout: .seconds(15), interval: .milliseconds(100)) {
        let monitors = try? await control.monitors("hci1")
        let discovery = try? await control.discoveryClients("hci1")
        return monitors?.count == 1 && discovery?.isEmpty == true
      })
    let underMonitor = ContinuousClock.now
    #expect(
      await heard.first(since: underMonitor) { $0.token == token } != nil)
    await speaker.shutdown()
    await listener.shutdown()
  }
}
