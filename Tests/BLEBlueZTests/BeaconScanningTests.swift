import BlueZTestSupport
import Core
import DBus
import MediumTestKit
import TestSupport
import Testing
import Tokens

@testable import BLEBlueZ
import NearbyTesting
import BeaconFrames

/// Beacon scanning against simulated beacons: adverts registered on another adapter of the
/// double, exactly as a Linux box makes itself a beacon. In the serialized double suite.
extension BlueZDoubleTests {
  /// The first beacon sighting of `frame` heard since `since`, waiting at most `timeout`.
  static func sighting(
    of frame: BeaconFrame, in recorder: StreamRecorder<BeaconSighting>,
    since: ContinuousClock.Instant = .now - .seconds(1), timeout: Duration = .seconds(5),
    where condition: @Sendable (BeaconSighting) -> Bool = { _ in true }
  ) async -> BeaconSighting? {
    await recorder.first(since: since, timeout: timeout) { $0.frame == frame && condition($0) }
  }

  /// Active scanning hears every kind of beacon on another adapter, with the exact frame.
  @Test(.requires(.bluezDouble)) func activeBeaconScanningHearsSimulatedBeacons() async throws {
    let control = try await DoubleControl.connect()
    defer { control.close() }
    let frames = [
      SampleBeacons.eddystoneUID, SampleBeacons.eddystoneEID, SampleBeacons.iBeacon,
      SampleBeacons.altBeacon,
    ]
    var beacons: [SimulatedBeacon] = []
    for frame in frames {
      beacons.append(try await SimulatedBeacon.start(frame, on: "hci1", bus: control.bus))
    }
    #expect(try await control.adverts("hci1").count == frames.count)
    let medium = try await control.medium("hci0")
    #expect(medium.capabilities.contains(.beacons))
    let heard = StreamRecorder(medium.beaconSightings)
    try await medium.startBeaconScanning(lowPower: false)
    #expect(try await control.discoveryClients("hci0").count == 1)
    for frame in frames {
      let sighting = await Self.sighting(of: frame, in: heard)
      #expect(sighting != nil, "no sighting of \(frame)")
      #expect(sighting?.address.hasPrefix("C0:DE:01:") == true)
      // hci1 → hci0: the double's −45 − 6 dBm, jitter ±2.
      #expect((-53 ... -49).contains(sighting?.rssi ?? 0))
    }
    // Nothing but the frames sent.
    #expect(heard.elements.allSatisfy { frames.contains($0.frame) })
    // Service data is keyed as bluetoothd keys it: the full 128-bit UUID.
    let keys = try await control.connection.managedObjects(of: "org.bluez")
      .values.compactMap { $0["org.bluez.Device1"]?["ServiceData"]?.stringDictionary?.keys }
      .flatMap { $0 }
    #expect(keys.contains("0000feaa-0000-1000-8000-00805f9b34fb"))
    #expect(!keys.contains { $0.count != 36 })
    for beacon in beacons { await beacon.stop() }
    await medium.shutdown()
    #expect(await heard.waitUntilFinished())
  }

  /// With low power asked and monitors offered, one pattern monitor covers beacons (and our
  /// token while token scanning); asking for active scanning moves to discovery.
  @Test(.requires(.bluezDouble)) func lowPowerBeaconScanningUsesAPatternMonitor() async throws {
    let control = try await DoubleControl.connect()
    defer { control.close() }
    try await control.setMonitorSupport("hci0", true)
    let uid = try await SimulatedBeacon.start(
      SampleBeacons.eddystoneUID, on: "hci1", bus: control.bus)
    let iBeacon = try await SimulatedBeacon.start(
      SampleBeacons.iBeacon, on: "hci2", bus: control.bus)
    let medium = try await control.medium("hci0")
    let heard = StreamRecorder(medium.beaconSightings)
    try await medium.startBeaconScanning(lowPower: true)
    #expect(try await control.discoveryClients("hci0").isEmpty)
    let monitors = try await control.monitors("hci0")
    #expect(monitors == [try DBusObjectPath("/org/nearby/ble/monitor0")])
    let beaconPatterns = try await control.monitorPatterns("hci0")
    #expect(
      beaconPatterns == [
        Pattern(start: 0, type: 0x16, content: [0xaa, 0xfe]),
        Pattern(start: 0, type: 0xff, content: [0x4c, 0x00, 0x02, 0x15]),
        Pattern(start: 2, type: 0xff, content: [0xbe, 0xac]),
      ])
    #expect(await Self.sighting(of: SampleBeacons.eddystoneUID, in: heard) != nil)
    #expect(await Self.sighting(of: SampleBeacons.iBeacon, in: heard) != nil)
    // Token scanning joins: the same monitor, now with our token pattern too.
    try await medium.startScanning()
    let both = try await control.monitorPatterns("hci0")
    #expect(both.count == 4)
    #expect(both.first?.type == BLETokenFrame.serviceData128ADType)
    #expect(Array(both.dropFirst()) == beaconPatterns)
    // Active scanning asked for: discovery, with the same monitor beside it (through it the
    // kernel passes the reports it drops at each discovery cycle's start, findings item G);
    // beacons still heard.
    try await medium.startBeaconScanning(lowPower: false)
    #expect(try await control.discoveryClients("hci0").count == 1)
    // One monitor (each registration exports it at a new path: monitor0, monitor1, …).
    let beside = try await control.monitors("hci0")
    #expect(beside.count == 1)
    #expect(beside.first?.description.hasPrefix("/org/nearby/ble/monitor") == true)
    #expect(
      try await control.monitorPatterns("hci0").count == 4)
    let switched = ContinuousClock.now
    #expect(await Self.sighting(of: SampleBeacons.eddystoneUID, in: heard, since: switched) != nil)
    await uid.stop()
    await iBeacon.stop()
    await medium.shutdown()
  }

  /// The double's SetRSSI moves a beacon away; the sightings follow.
  /// Real bluetoothd sends no property change for an advert that repeats itself while only a
  /// monitor scans: a still beacon stays present while the monitor's DeviceFound comes for its
  /// reports (our monitor sets no RSSI property, findings item F), and the medium keeps
  /// reporting it (every second) without any property change.
  @Test(.requires(.bluezDouble)) func aStillBeaconStaysPresentThroughTheMonitor() async throws {
    let control = try await DoubleControl.connect()
    defer { control.close() }
    try await control.setMonitorSupport("hci0", true)
    try await control.setQuietMonitors(true)
    let medium = try await control.medium("hci0")
    let heard = StreamRecorder(medium.beaconSightings)
    try await medium.startBeaconScanning(lowPower: true)
    let uid = try await SimulatedBeacon.start(
      SampleBeacons.eddystoneUID, on: "hci1", bus: control.bus)
    #expect(await Self.sighting(of: SampleBeacons.eddystoneUID, in: heard) != nil)
    // Property changes are off: what arrives 1.5 s on comes from the monitor's presence.
    let later = ContinuousClock.now + .milliseconds(1500)
    #expect(
      await Self.sighting(of: SampleBeacons.eddystoneUID, in: heard, since: later) != nil)
    await uid.stop()  // its device goes: the medium no longer holds it, no more sightings
    #expect(await eventually() { await medium.engine.presentDevices().isEmpty })
    let gone = ContinuousClock.now
    #expect(await heard.first(since: gone, timeout: .milliseconds(1500)) == nil)
    await medium.shutdown()
  }

  @Test(.requires(.bluezDouble)) func beaconSightingsFollowTheSignal() async throws {
    let control = try await DoubleControl.connect()
    defer { control.close() }
    let beacon = try await SimulatedBeacon.start(
      SampleBeacons.iBeacon, on: "hci1", bus: control.bus)
    let medium = try await control.medium("hci0")
    let heard = StreamRecorder(medium.beaconSightings)
    try await medium.startBeaconScanning(lowPower: false)
    #expect(
      await Self.sighting(of: SampleBeacons.iBeacon, in: heard) { $0.rssi ?? 0 > -60 } != nil)
    try await control.setRSSI(advertiser: "hci1", rssi: -85)
    let moved = await Self.sighting(of: SampleBeacons.iBeacon, in: heard) {
      (-87 ... -83).contains($0.rssi ?? 0)
    }
    #expect(moved != nil)
    try await control.setRSSI(advertiser: "hci1", rssi: 0)
    #expect(
      await Self.sighting(of: SampleBeacons.iBeacon, in: heard) { $0.rssi ?? 0 > -60 } != nil)
    await beacon.stop()
    await medium.shutdown()
  }

  /// Stopping beacon scanning ends beacon sightings; token scanning keeps hearing a token.
  @Test(.requires(.bluezDouble)) func stoppingBeaconScanningLeavesTokenScanning() async throws {
    let control = try await DoubleControl.connect()
    defer { control.close() }
    let beacon = try await SimulatedBeacon.start(
      SampleBeacons.eddystoneURL, on: "hci1", bus: control.bus)
    let speaker = try await control.medium("hci2")
    let listener = try await control.medium("hci0")
    let beacons = StreamRecorder(listener.beaconSightings)
    let tokens = StreamRecorder(listener.sightings)
    let token = Token.random()
    try await speaker.transmit(token)
    try await listener.startScanning()
    try await listener.startBeaconScanning(lowPower: false)
    #expect(await Self.sighting(of: SampleBeacons.eddystoneURL, in: beacons) != nil)
    #expect(
      await tokens.first(since: .now - .seconds(1)) { $0.token == token }
        != nil)
    // No beacon frame in the token sightings, no token in the beacon sightings.
    #expect(beacons.elements.allSatisfy { $0.frame == SampleBeacons.eddystoneURL })
    await listener.stopBeaconScanning()
    // Sightings yielded before the stop may still be on their way to the recorders: count from
    // the first token sighting after it, which the engine yielded after them.
    let stopping = ContinuousClock.now
    #expect(await tokens.first(since: stopping) { $0.token == token } != nil)
    let stopped = ContinuousClock.now
    #expect(await tokens.first(since: stopped) { $0.token == token } != nil)
    #expect(beacons.elements(since: stopped).isEmpty)
    #expect(try await control.discoveryClients("hci0").count == 1)
    await beacon.stop()
    await speaker.shutdown()
    await listener.shutdown()
  }

  /// After bluetoothd restarts, beacon scanning comes back by itself.
  @Test(.requires(.bluezDouble)) func beaconScanningRecoversFromABluetoothdRestart() async throws {
    let control = try await DoubleControl.connect()
    defer { control.close() }
    var beacon = try await SimulatedBeacon.start(
      SampleBeacons.eddystoneEID, on: "hci1", bus: control.bus)
    let medium = try await control.medium("hci0")
    let heard = StreamRecorder(medium.beaconSightings)
    let statuses = StreamRecorder(medium.statusUpdates)
    try await medium.startBeaconScanning(lowPower: true)
    #expect(await Self.sighting(of: SampleBeacons.eddystoneEID, in: heard) != nil)
    try await control.restart(downFor: .milliseconds(300))
    #expect(
      await statuses.until { elements in
        elements.contains { if case .unavailable = $0 { true } else { false } }
      })
    #expect(try await control.waitForBlueZ())
    #expect(await statuses.until { $0.last == .ready })
    // The restarted double forgot every advert: the beacon registers again, as it would.
    await beacon.stop()
    beacon = try await SimulatedBeacon.start(
      SampleBeacons.eddystoneEID, on: "hci1", bus: control.bus)
    let back = ContinuousClock.now
    #expect(await Self.sighting(of: SampleBeacons.eddystoneEID, in: heard, since: back) != nil)
    #expect(try await control.discoveryClients("hci0").count == 1)
    await beacon.stop()
    await medium.shutdown()
  }

  typealias Pattern = DoubleControl.MonitorPattern
}
