import TestSupport
import BlueZTestSupport
import Core
import DBus
import Logging
import MediumTestKit
import Testing
import Tokens

@testable import BLEBlueZ
import NearbyTesting
import BeaconFrames

/// Every test that uses the BlueZ double: one serialized suite, because they share the one
/// double on the private system bus (each test resets it first).
@Suite(.serialized) struct BlueZDoubleTests {
  @Test(.requires(.bluezDouble), arguments: MediumConformance.Check.allCases)
  func conformance(_ check: MediumConformance.Check) async throws {
    let control = try await DoubleControl.connect()
    defer { control.close() }
    try await MediumConformance(
      settle: .milliseconds(400), quiet: .milliseconds(600),
      makePair: {
        MediumConformance.Pair(
          first: try await control.medium("hci0"), second: try await control.medium("hci1"))
      }
    ).run(check)
  }

  @Test(.requires(.bluezDouble)) func advertIsReadByBlueZWithOurFrame() async throws {
    let control = try await DoubleControl.connect()
    defer { control.close() }
    let medium = try await control.medium("hci0")
    let token = Token.random()
    try await medium.transmit(token)
    let adverts = try await control.adverts("hci0")
    #expect(adverts.count == 1)
    let payload = adverts.first?["ServiceData"]?.stringDictionary?[BLETokenFrame.serviceUUID]?.bytes
    #expect(try payload.map { try BLETokenFrame(payload: $0).token } == token)
    #expect(adverts.first?["Type"]?.string == "broadcast")
    #expect(adverts.first?["Length"]?.integer == 28)
    await medium.stopTransmitting()
    #expect(try await control.adverts("hci0").isEmpty)
    await medium.shutdown()
  }

  @Test(.requires(.bluezDouble)) func advertThatCannotFitIsRefusedBeforeBlueZSeesIt() async throws {
    let control = try await DoubleControl.connect()
    defer { control.close() }
    let medium = try await control.medium("hci0", localName: "kiosk")
    do {
      try await medium.transmit(Token.random())
      Issue.record("a 35-byte advert was accepted")
    } catch let error as BlueZMediumError {
      #expect(error == .advertisementTooLong(bytes: 35, limit: 31))
      #expect(error.description.contains("31"))
    }
    #expect(try await control.adverts("hci0").isEmpty)
    await medium.shutdown()
  }

  @Test(.requires(.bluezDouble)) func maximumAdvertisementsIsATypedError() async throws {
    let control = try await DoubleControl.connect()
    defer { control.close() }
    try await control.setSupportedInstances("hci0", 0)
    let medium = try await control.medium("hci0")
    do {
      try await medium.transmit(Token.random())
      Issue.record("advertising beyond the instance limit succeeded")
    } catch let BlueZMediumError.bluez(error) {
      #expect(error.name == .bluezNotPermitted)
      #expect(error.message.contains("Maximum advertisements"))
    }
    await medium.shutdown()
  }

  @Test(.requires(.bluezDouble)) func powerOffAndOnChangesStatus() async throws {
    let control = try await DoubleControl.connect()
    defer { control.close() }
    let medium = try await control.medium("hci0")
    let statuses = StreamRecorder(medium.statusUpdates)
    #expect(await statuses.until { $0.last == .ready })
    try await control.setPowered("hci0", false)
    #expect(await statuses.until { $0.last == .poweredOff })
    await #expect(throws: BlueZMediumError.self) { try await medium.transmit(Token.random()) }
    try await control.setPowered("hci0", true)
    #expect(await statuses.until { $0.last == .ready })
    // The wish was kept: once powered, the advert is registered without another call.
    #expect(await eventually { (try? await control.adverts("hci0").count) == 1 })
    await medium.shutdown()
  }

  @Test(.requires(.bluezDouble)) func accessDeniedIsAPermissionErrorWithTheFix() async throws {
    let control = try await DoubleControl.connect()
    defer { control.close() }
    try await control.setAccessDenied(true)
    let medium = try await control.medium("hci0")
    let statuses = StreamRecorder(medium.statusUpdates)
    #expect(
      await statuses.until { elements in
        if case .permissionDenied(let fix) = elements.last {
          return fix.contains("bluetooth") && fix.contains("group")
        }
        return false
      })
    await #expect(throws: BlueZMediumError.self) { try await medium.transmit(Token.random()) }
    await medium.shutdown()
  }

  @Test(.requires(.bluezDouble)) func recoversFromABluetoothdRestart() async throws {
    let control = try await DoubleControl.connect()
    defer { control.close() }
    let speaker = try await control.medium("hci0")
    let listener = try await control.medium("hci1")
    let heard = StreamRecorder(listener.sightings)
    let statuses = StreamRecorder(listener.statusUpdates)
    let token = Token.random()
    try await listener.startScanning()
    try await speaker.transmit(token)
    #expect(
      await heard.first(since: .now - .seconds(1)) { $0.token == token }
        != nil)
    try await control.restart(downFor: .milliseconds(300))
    #expect(
      await statuses.until { elements in
        elements.contains { if case .unavailable = $0 { true } else { false } }
      })
    #expect(try await control.waitForBlueZ())
    let back = ContinuousClock.now
    #expect(await statuses.until { $0.last == .ready })
    #expect(await heard.first(since: back) { $0.token == token } != nil)
    #expect(try await control.adverts("hci0").count == 1)
    #expect(try await control.discoveryClients("hci1").count == 1)
    await speaker.shutdown()
    await listener.shutdown()
  }

  @Test(.requires(.bluezDouble)) func followsAnAdapterThatGoesAwayAndComesBack() async throws {
    let control = try await DoubleControl.connect()
    defer { control.close() }
    let medium = try await control.medium("hci0")
    let statuses = StreamRecorder(medium.statusUpdates)
    try await medium.transmit(Token.random())
    try await control.removeAdapter("hci0")
    #expect(await statuses.until { $0.last == .poweredOff })
    try await control.addAdapter("hci0")
    #expect(await statuses.until { $0.last == .ready })
    #expect(await eventually { (try? await control.adverts("hci0").count) == 1 })
    await medium.shutdown()
  }

  /// btvirt restarted under the real bluetoothd (Tests/BLEBlueZVM/RealBlueZRestartTests):
  /// both adapters go away while one medium advertises and the other scans, and come back;
  /// both resume by themselves, with one advert and one discovery session each.
  @Test(.requires(.bluezDouble)) func advertAndScanResumeWhenBothAdaptersComeBack() async throws {
    let control = try await DoubleControl.connect()
    defer { control.close() }
    let speaker = try await control.medium("hci0")
    let listener = try await control.medium("hci1")
    let heard = StreamRecorder(listener.sightings)
    let speakerStatuses = StreamRecorder(speaker.statusUpdates)
    let listenerStatuses = StreamRecorder(listener.statusUpdates)
    let token = Token.random()
    try await listener.startScanning()
    try await speaker.transmit(token)
    #expect(await heard.first() { $0.token == token } != nil)
    try await control.removeAdapter("hci0")
    try await control.removeAdapter("hci1")
    #expect(await speakerStatuses.until { $0.last == .poweredOff })
    #expect(await listenerStatuses.until { $0.last == .poweredOff })
    try await control.addAdapter("hci1")
    try await control.addAdapter("hci0")
    let back = ContinuousClock.now
    #expect(await speakerStatuses.until { $0.last == .ready })
    #expect(await listenerStatuses.until { $0.last == .ready })
    #expect(await heard.first(since: back) { $0.token == token } != nil)
    #expect(try await control.adverts("hci0").count == 1)
    #expect(try await control.discoveryClients("hci1").count == 1)
    await speaker.shutdown()
    await listener.shutdown()
  }

  @Test(.requires(.bluezDouble)) func sightingsCarryRSSIAndTxPower() async throws {
    let control = try await DoubleControl.connect()
    defer { control.close() }
    let speaker = try await control.medium("hci0")
    let listener = try await control.medium("hci2")
    let heard = StreamRecorder(listener.sightings)
    let token = Token.random()
    try await listener.startScanning()
    try await speaker.transmit(token)
    let sighting = await heard.first(since: .now - .seconds(1)) {
      $0.token == token
    }
    #expect(sighting?.medium == .ble)
    #expect(sighting?.txPower == -20)
    #expect((-65.0 ... -50.0).contains(sighting?.rssi ?? 0))
    await speaker.shutdown()
    await listener.shutdown()
  }

  /// BlueZ's NotReady is retried with backoff; the call succeeds once BlueZ is ready.
  @Test(.requires(.bluezDouble)) func notReadyIsRetried() async throws {
    let control = try await DoubleControl.connect()
    defer { control.close() }
    try await control.failNext("StartDiscovery", with: "org.bluez.Error.NotReady", count: 2)
    try await control.failNext(
      "RegisterAdvertisement", with: "org.bluez.Error.InProgress", count: 2)
    let medium = try await control.medium("hci1")
    try await medium.startScanning()
    try await medium.transmit(Token.random())
    #expect(try await control.discoveryClients("hci1").count == 1)
    #expect(try await control.adverts("hci1").count == 1)
    await medium.shutdown()
  }

  /// A scan that goes silent is restarted by the watchdog (3 s in these tests).
  @Test(.requires(.bluezDouble)) func watchdogRestartsASilentScan() async throws {
    let control = try await DoubleControl.connect()
    defer { control.close() }
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
    // The watchdog restarts the silent scan, and the sightings come back after the restart.
    #expect(await eventually { await listener.engine.watchdogRestarts >= 1 })
    let restarted = ContinuousClock.now
    #expect(
      await heard.first(since: restarted, timeout: .seconds(10)) { $0.token == token } != nil)
    await speaker.shutdown()
    await listener.shutdown()
  }

  /// Reporting every advertisement (`nearby ble scan`) needs discovery even where the adapter
  /// offers pattern monitors (real bluetoothd does): a monitor for our token would hide the
  /// rest, such as this Eddystone beacon.
  @Test(.requires(.bluezDouble))
  func reportingEveryAdvertisementDiscoversEvenWhereMonitorsAreOffered() async throws {
    let control = try await DoubleControl.connect()
    defer { control.close() }
    try await control.setMonitorSupport("hci1", true)
    let beacon = try await SimulatedBeacon.start(
      SampleBeacons.eddystoneUID, on: "hci0", bus: control.bus)
    var configuration = BlueZConfiguration(bus: control.bus, adapter: "hci1")
    configuration.reportsAllAdvertisements = true
    let listener = try await BlueZMedium(
      configuration: configuration, logger: Logger(label: "test.bluez.all"))
    let heard = StreamRecorder(listener.advertisements)
    try await listener.startScanning()
    #expect(try await control.discoveryClients("hci1").count == 1)
    #expect(try await control.monitors("hci1").isEmpty)
    let eddystone = await heard.first(since: .now - .seconds(1)) {
      $0.serviceData.keys.contains { $0.hasPrefix("0000feaa") }
    }
    #expect(eddystone != nil)
    await beacon.stop()
    await listener.shutdown()
  }

  /// Where the adapter offers AdvertisementMonitorManager1, scanning registers a pattern
  /// monitor for our service data instead of starting discovery, and still hears the peer.
  @Test(.requires(.bluezDouble)) func scansWithAPatternMonitorWhereOffered() async throws {
    let control = try await DoubleControl.connect()
    defer { control.close() }
    try await control.setMonitorSupport("hci1", true)
    let speaker = try await control.medium("hci0")
    let listener = try await control.medium("hci1")
    let heard = StreamRecorder(listener.sightings)
    let token = Token.random()
    try await listener.startScanning()
    try await speaker.transmit(token)
    #expect(
      await heard.first(since: .now - .seconds(1)) { $0.token == token }
        != nil)
    #expect(try await control.discoveryClients("hci1").isEmpty)
    let monitors = try await control.monitors("hci1")
    #expect(monitors == [try DBusObjectPath("/org/nearby/ble/monitor0")])
    await listener.stopScanning()
    #expect(try await control.monitors("hci1").isEmpty)
    await speaker.shutdown()
    await listener.shutdown()
  }
}
