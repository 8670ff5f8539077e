import BLEBlueZ
import BlueZTestSupport
import DBus
import InMemoryLogging
import Logging
import Testing
import TestSupport
import Tokens
import NearbyTesting

/// Others' adverts on our adapter while we scan (docs/bluez-vm-findings.md item K): the medium
/// cannot know whether the controller can take turns between them while scanning, so it warns.
/// In the serialized double suite.
extension BlueZDoubleTests {
  /// A medium that advertises and scans on hci0 warns once when a beacon's advert joins its
  /// own there (ActiveInstances 2), and not before; the warning names the count.
  @Test(.requires(.bluezDouble)) func othersAdvertsBesideOursWhileScanningAreWarnedAbout()
    async throws
  {
    let control = try await DoubleControl.connect()
    defer { control.close() }
    let logs = InMemoryLogHandler.keepingEverything()
    let configuration = BlueZConfiguration(bus: control.bus, adapter: "hci0")
    let medium = try await BlueZMedium(
      configuration: configuration, logger: Logger(label: "test.bluez.shared") { _ in logs })
    try await medium.transmit(Token.random())
    try await medium.startScanning()
    #expect(try await control.adverts("hci0").count == 1)
    let warnings = { logs.messages.filter { $0.0 == .warning && $0.1.contains("adverts") } }
    #expect(warnings().isEmpty)
    let beacon = try await SimulatedBeacon.start(
      SampleBeacons.eddystoneUID, on: "hci0", bus: control.bus)
    #expect(await eventually() { warnings().count == 1 })
    #expect(warnings().first?.1.contains("carries 2 adverts") == true)
    await beacon.stop()
    await medium.shutdown()
  }
}
