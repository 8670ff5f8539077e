import DBus
import Foundation
import Logging
import TestSupport
import Testing
import Tokens

@testable import BLEBlueZ
import NearbyTesting

/// Presence against the REAL bluetoothd of the BlueZ VM (docs/bluez-vm-findings.md items 8, 10
/// and 11): the emulated air always reports RSSI 127 and bluetoothd sends nothing for an
/// advert that repeats itself unchanged (it even removes the device 30 s after creating it,
/// and creates it again at the next discovery cycle), yet the medium keeps a still peer
/// present well past 30 s under discovery and its watchdog leaves the scan alone. Run by
/// `Tools/scripts/bluez-vm/conformance.sh`; outside the VM every test fails, naming the rig.
@Suite(.serialized, .requires(.bluezVM)) struct RealBlueZPresenceTests {
  /// A medium that scans with discovery (every advertisement reported: `nearby ble scan`'s
  /// configuration) and the default watchdog (15 s).
  static func discoveringMedium(_ adapter: String) async throws -> BlueZMedium {
    var configuration = BlueZConfiguration(bus: .system, adapter: adapter)
    configuration.reportsAllAdvertisements = true
    var logger = Logger(label: "vm.bluez.presence.\(adapter)")
    logger.logLevel = .warning
    return try await BlueZMedium(configuration: configuration, logger: logger)
  }

  @Test func aStillPeerStaysPresentPast30SecondsUnderDiscovery() async throws {
    try RealBlueZ.requireVM()
    let speaker = try await RealBlueZ.medium("hci0")
    let listener = try await Self.discoveringMedium("hci1")
    let heard = StreamRecorder(listener.sightings)
    let reports = StreamRecorder(listener.advertisements)
    let token = Token.random()
    try await listener.startScanning()
    try await speaker.transmit(token)
    let first = await heard.first(since: .now - .seconds(5), timeout: .seconds(30)) {
      $0.token == token
    }
    #expect(first != nil, "hci1 did not hear hci0's token")
    // Item 8: the emulated controllers report RSSI 127, "not available": unknown, not 127 dBm.
    #expect(first.map { $0.rssi == nil } == true)
    let from = ContinuousClock.now
    try await Task.sleep(for: .seconds(50))
    let times = heard.elements(since: from).filter { $0.token == token }.map(\.time)
    let pauses = zip([Date.now.addingTimeInterval(-50)] + times, times + [Date.now]).map {
      $1.timeIntervalSince($0)
    }
    let longestPause = pauses.max() ?? 50
    let restarts = await listener.engine.watchdogRestarts
    let told = reports.elements(since: from).filter { $0.token == token }.count
    print(
      "presence: \(times.count) sightings in 50 s, longest pause \(longestPause) s, "
        + "\(told) reports from bluetoothd, \(restarts) watchdog restarts")
    // Never silent for the resolver's lostAfter (10 s): the peer was never lost.
    #expect(longestPause < 9, "the still peer went unheard for \(longestPause) s")
    #expect(times.count >= 20)
    #expect(restarts == 0, "the watchdog restarted a healthy scan \(restarts) times")
    // What bluetoothd sent in those 50 s: next to nothing (item 10).
    #expect(told < times.count)
    await speaker.shutdown()
    await listener.shutdown()
  }

  /// Item 11: stopping the adapter's only discovery session, bluetoothd invalidates each
  /// device's RSSI (PropertiesChanged, third argument), then removes the devices, then sets
  /// Discovering false. The medium reads that very signal: the RSSI becomes unknown and the
  /// device no longer counts as heard.
  @Test func stopDiscoveryInvalidatesTheRSSIAndTheMediumReadsIt() async throws {
    try RealBlueZ.requireVM()
    let observer = try await DBusConnection(.system)
    defer { observer.close() }
    let signals = StreamRecorder(
      try await observer.signals(matching: DBusMatchRule(sender: "org.bluez")))
    let speaker = try await RealBlueZ.medium("hci0")
    let listener = try await Self.discoveringMedium("hci1")
    let heard = StreamRecorder(listener.sightings)
    let token = Token.random()
    try await listener.startScanning()
    try await speaker.transmit(token)
    #expect(
      await heard.first(since: .now - .seconds(5), timeout: .seconds(30)) { $0.token == token }
        != nil)
    let stopping = ContinuousClock.now
    await listener.stopScanning()
    func isInvalidation(_ signal: DBusMessage) -> Bool {
      guard signal.member == "PropertiesChanged",
        signal.path?.rawValue.hasPrefix("/org/bluez/hci1/") == true,
        let body = try? signal.arguments("sa{sv}as"), body[0].string == "org.bluez.Device1"
      else { return false }
      return body[2].elements?.compactMap(\.string).contains("RSSI") == true
    }
    let invalidation = await signals.first(
      since: stopping, timeout: .seconds(10), where: isInvalidation)
    let message = try #require(invalidation, "bluetoothd did not invalidate the RSSI")
    let path = try #require(message.path)
    #expect(
      await signals.first(since: stopping, timeout: .seconds(10)) {
        $0.member == "InterfacesRemoved" && (try? $0.arguments("oas"))?.first?.objectPath == path
      } != nil)
    // The medium, holding a known RSSI for that device, reads bluetoothd's own signal.
    let now = await listener.engine.clock.now
    var known = DeviceState(at: now)
    _ = known.apply(
      ["RSSI": .int16(-50), "Adapter": .objectPath(try DBusObjectPath("/org/bluez/hci1"))],
      at: now)
    await listener.engine.remember(known, at: path)
    await listener.engine.handle(message)
    let after = await listener.engine.devices[path]
    #expect(after?.rssi == nil && after?.heard == false)
    await speaker.shutdown()
    await listener.shutdown()
  }
}

extension BlueZEngine {
  /// Sets what the engine knows of a device (for the test above).
  func remember(_ device: DeviceState, at path: DBusObjectPath) { devices[path] = device }
}
