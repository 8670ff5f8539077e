import BLEBlueZ
import BlueZTestSupport
import DBus
import Testing
import TestSupport
import Tokens
import NearbyTesting
import BeaconFrames

/// Advertising on an adapter that scans. The double refuses the first advert of a scanning
/// adapter as the kernel does (docs/bluez-vm-findings.md item D); the medium pauses its own
/// scan to register, then resumes it.
extension BlueZDoubleTests {
  /// Scanning first, then transmitting on the same adapter (a manager that subscribes, then
  /// publishes): the advert goes out and the scan comes back, with discovery or with a
  /// pattern monitor.
  @Test(.requires(.bluezDouble), arguments: [false, true])
  func scanningThenTransmittingAdvertisesAndKeepsScanning(monitors: Bool) async throws {
    let control = try await DoubleControl.connect()
    defer { control.close() }
    if monitors {
      for adapter in ["hci0", "hci1"] {
        try await control.setMonitorSupport(adapter, true)
      }
    }
    let both = try await control.medium("hci0")
    let peer = try await control.medium("hci1")
    let heardByPeer = StreamRecorder(peer.sightings)
    let heardByBoth = StreamRecorder(both.sightings)
    try await both.startScanning()
    try await peer.startScanning()
    let token = Token.random()
    try await both.transmit(token)
    #expect(try await control.adverts("hci0").count == 1)
    #expect(await heardByPeer.first() { $0.token == token } != nil)
    // hci0 scans again: with the same plan, and it hears hci1's token.
    if monitors {
      #expect(try await control.monitors("hci0").count == 1)
    } else {
      #expect(try await control.discoveryClients("hci0").count == 1)
    }
    let answer = Token.random()
    try await peer.transmit(answer)
    #expect(await heardByBoth.first() { $0.token == answer } != nil)
    await both.shutdown()
    await peer.shutdown()
  }

  /// A token rotation while the adapter scans: the old advert is unregistered first, so the
  /// new one is the adapter's first again, refused until the medium pauses its scan.
  @Test(.requires(.bluezDouble)) func rotationWhileScanningReplacesTheToken() async throws {
    let control = try await DoubleControl.connect()
    defer { control.close() }
    let both = try await control.medium("hci0")
    let peer = try await control.medium("hci1")
    let heard = StreamRecorder(peer.sightings)
    let old = Token.random()
    try await peer.startScanning()
    try await both.transmit(old)
    try await both.startScanning()
    #expect(await heard.first() { $0.token == old } != nil)
    let new = Token.random()
    let rotated = ContinuousClock.now
    try await both.transmit(new)
    #expect(await heard.first(since: rotated) { $0.token == new } != nil)
    let adverts = try await control.adverts("hci0")
    #expect(adverts.count == 1)
    let payload = adverts.first?["ServiceData"]?.stringDictionary?[BLETokenFrame.serviceUUID]?.bytes
    #expect(try payload.map { try BLETokenFrame(payload: $0).token } == new)
    #expect(try await control.discoveryClients("hci0").count == 1)
    await both.shutdown()
    await peer.shutdown()
  }

  /// Another client's scan on the adapter (here a discovery session of a second connection)
  /// keeps the controller scanning when the medium pauses its own: transmit fails, once, with
  /// BlueZ's error, and the medium's own scan is resumed.
  @Test(.requires(.bluezDouble)) func anotherClientsScanMakesTransmitFail() async throws {
    let control = try await DoubleControl.connect()
    defer { control.close() }
    let other = try await DBusConnection(control.bus)
    defer { other.close() }
    let adapter = try DBusObjectPath("/org/bluez/hci0")
    _ = try await other.call(
      destination: "org.bluez", path: adapter, interface: "org.bluez.Adapter1",
      member: "StartDiscovery")
    let medium = try await control.medium("hci0")
    try await medium.startScanning()
    #expect(try await control.discoveryClients("hci0").count == 2)
    do {
      try await medium.transmit(Token.random())
      Issue.record("the advert was accepted while another client scans")
    } catch let BlueZMediumError.bluez(error) {
      #expect(error.name == .bluezFailed)
      #expect(error.message.contains("Failed to register advertisement"))
    }
    #expect(try await control.adverts("hci0").isEmpty)
    #expect(try await control.discoveryClients("hci0").count == 2)
    // Once the other client stops, the kept wish goes out (the next transmit, or a reconcile).
    _ = try await other.call(
      destination: "org.bluez", path: adapter, interface: "org.bluez.Adapter1",
      member: "StopDiscovery")
    try await medium.transmit(Token.random())
    #expect(try await control.adverts("hci0").count == 1)
    await medium.shutdown()
  }
}
