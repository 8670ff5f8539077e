import Core
import DBus
import Testing
import Tokens

@testable import BLEBlueZ
import BeaconFrames

/// The device side's decisions on instants (``DeviceReports``): which BlueZ signals it handles
/// on the dispatch thread and which wait for the engine, in order; which advertising reports
/// become sightings. No bus, no double, no sleeping.
@Suite("Device reports, decided on instants")
struct DeviceReportsTests: DecidedOnInstants {
  let start = NearbyClock.Instant(offset: .seconds(100))
  static let token = Token(value: 0x0102_0304_0506_0708)
  static let frame = BLETokenFrame(token: token, txPower: -20)

  /// Scanning for tokens with discovery on the adapter, unless told otherwise.
  func make(
    scan: ScanPlan? = .discovery(beside: nil), tokens: Bool = true, beacons: Bool = false,
    reportsAll: Bool = false
  ) -> DeviceReports {
    var reports = DeviceReports(presence: .init(), reportsAllAdvertisements: reportsAll)
    reports.scanning.adapter = Self.adapter
    reports.scanning.adapters = [Self.adapter]
    reports.scanning.scan = scan
    reports.scanning.tokens = tokens
    reports.scanning.beacons = beacons
    return reports
  }

  /// An advertising report: an RSSI and our frame with `token` as service data.
  static func advert(_ token: Token = token, rssi: Int16 = -60) -> [String: DBusValue] {
    [
      "Adapter": .objectPath(adapter), "RSSI": .int16(rssi),
      "ServiceData": .vardict(
        [BLETokenFrame.serviceUUID: .bytes(BLETokenFrame(token: token, txPower: -20).payload)]),
    ]
  }

  static func propertiesChanged(
    _ path: DBusObjectPath, _ interface: String, _ changed: [String: DBusValue],
    invalidated: [String] = []
  ) -> DBusMessage {
    .signal(
      path: path, interface: "org.freedesktop.DBus.Properties", member: "PropertiesChanged",
      body: [.string(interface), .vardict(changed), .strings(invalidated)])
  }

  static func interfacesAdded(_ path: DBusObjectPath, _ interfaces: [String: [String: DBusValue]])
    -> DBusMessage
  {
    .signal(
      path: .root, interface: "org.freedesktop.DBus.ObjectManager", member: "InterfacesAdded",
      body: [
        .objectPath(path),
        .dictionary(
          key: .string, value: .dictionary(key: .string, value: .variant),
          interfaces.sorted { $0.key < $1.key }.map {
            DBusDictEntry(.string($0.key), .vardict($0.value))
          }),
      ])
  }

  static func interfacesRemoved(_ path: DBusObjectPath, _ names: [String]) -> DBusMessage {
    .signal(
      path: .root, interface: "org.freedesktop.DBus.ObjectManager", member: "InterfacesRemoved",
      body: [.objectPath(path), .strings(names)])
  }

  // MARK: Signals: here or at the engine, in order

  @Test("device signals are handled here, adapter signals go to the engine")
  func devicesHereAdaptersToTheEngine() {
    let adapters: Set = [Self.adapter]
    func event(_ signal: DBusMessage) -> DeviceReports.Event? {
      DeviceReports.event(of: signal, adapters: adapters)
    }
    #expect(
      event(Self.propertiesChanged(Self.path, "org.bluez.Device1", ["RSSI": .int16(-50)]))
        == .changed(Self.path, ["RSSI": .int16(-50)], invalidated: []))
    #expect(
      event(Self.propertiesChanged(Self.path, "org.bluez.Device1", [:], invalidated: ["RSSI"]))
        == .changed(Self.path, [:], invalidated: ["RSSI"]))
    #expect(
      event(Self.interfacesAdded(Self.path, ["org.bluez.Device1": ["RSSI": .int16(-50)]]))
        == .changed(Self.path, ["RSSI": .int16(-50)], invalidated: []))
    #expect(
      event(Self.interfacesRemoved(Self.path, ["org.bluez.Device1", "org.bluez.Battery1"]))
        == .removed(Self.path))
    // What the engine would ignore is ignored here.
    #expect(
      event(Self.propertiesChanged(Self.path, "org.bluez.Battery1", ["Percentage": .byte(9)]))
        == .ignored)
    #expect(event(Self.interfacesAdded(Self.other, ["org.bluez.GattService1": [:]])) == .ignored)
    // Adapters: the engine's.
    #expect(
      event(Self.propertiesChanged(Self.adapter, "org.bluez.Adapter1", ["Powered": .boolean(true)]))
        == nil)
    #expect(
      event(
        Self.propertiesChanged(
          Self.adapter, "org.bluez.LEAdvertisingManager1", ["ActiveInstances": .byte(1)])) == nil)
    let hci2 = try! DBusObjectPath("/org/bluez/hci2")
    #expect(event(Self.interfacesAdded(hci2, ["org.bluez.Adapter1": [:]])) == nil)
    // Interfaces added to a known adapter.
    #expect(event(Self.interfacesAdded(Self.adapter, ["org.bluez.Media1": [:]])) == nil)
    #expect(event(Self.interfacesRemoved(Self.adapter, ["org.bluez.Adapter1"])) == nil)
    #expect(
      event(Self.interfacesRemoved(Self.adapter, ["org.bluez.AdvertisementMonitorManager1"]))
        == nil)
    #expect(event(Self.interfacesRemoved(Self.adapter, ["org.bluez.LEAdvertisingManager1"])) == nil)
  }

  @Test("while a signal waits for the engine, the device signals after it wait too")
  func deviceSignalsWaitBehindTheEngine() {
    var reports = make()
    let device = Self.propertiesChanged(Self.path, "org.bluez.Device1", Self.advert())
    let adapter = Self.propertiesChanged(
      Self.adapter, "org.bluez.Adapter1", ["Powered": .boolean(false)])
    #expect(reports.receive(device) != nil)
    #expect(reports.waiting == 0)
    #expect(reports.receive(adapter) == nil)
    #expect(reports.receive(device) == nil)
    #expect(reports.waiting == 2)
    reports.engineHandled()
    #expect(reports.receive(device) == nil)  // one still waits
    reports.engineHandled()
    reports.engineHandled()
    #expect(reports.waiting == 0)
    #expect(reports.receive(device) != nil)
    reports.engineHandled()  // never below zero
    #expect(reports.waiting == 0)
  }

  // MARK: Reports

  @Test("a report on the adapter while scanning for tokens is a token sighting")
  func tokenSighting() {
    var reports = make()
    let got = reports.deviceChanged(Self.path, Self.advert(), at: at(1))
    let device = try! #require(reports.devices[Self.path])
    #expect(got == [.token(Self.frame, device)])
    #expect(device.rssi == -60 && device.heard && device.lastData == at(1))
    #expect(reports.lastReport == at(1))
  }

  @Test("no sighting without our scan, off the adapter, without a report, or of our own token")
  func noSighting() {
    // No scan at BlueZ: remembered, and life for the watchdog, but no sighting.
    var idle = make(scan: nil)
    #expect(idle.deviceChanged(Self.path, Self.advert(), at: at(1)).isEmpty)
    #expect(idle.devices[Self.path] != nil)
    #expect(idle.lastReport == at(1))
    // Another adapter: not even life.
    var other = make()
    var elsewhere = Self.advert()
    elsewhere["Adapter"] = .objectPath(try! DBusObjectPath("/org/bluez/hci0"))
    #expect(other.deviceChanged(Self.elsewhere, elsewhere, at: at(1)).isEmpty)
    #expect(other.lastReport == nil)
    // No advertising report (a property that is not RSSI or data).
    var quiet = make()
    #expect(quiet.deviceChanged(Self.path, ["Connected": .boolean(true)], at: at(1)).isEmpty)
    #expect(quiet.lastReport == nil)
    // Token scanning not wished.
    var noTokens = make(tokens: false)
    #expect(noTokens.deviceChanged(Self.path, Self.advert(), at: at(1)).isEmpty)
    // Our own token: the one advertised, and the one wanted.
    var advertised = make()
    advertised.scanning.advertised = Self.token
    #expect(advertised.deviceChanged(Self.path, Self.advert(), at: at(1)).isEmpty)
    var wanted = make()
    wanted.scanning.wanted = Self.token
    #expect(wanted.deviceChanged(Self.path, Self.advert(), at: at(1)).isEmpty)
  }

  @Test("beacons first, then the whole report when every advertisement is reported, then the token")
  func reportOrder() {
    var reports = make(beacons: true, reportsAll: true)
    let got = reports.deviceChanged(Self.path, Self.advert(), at: at(1))
    let device = try! #require(reports.devices[Self.path])
    #expect(
      got == [
        .beacons(device, path: Self.path), .advertisement(device, path: Self.path),
        .token(Self.frame, device),
      ])
    // Beacon scanning alone: the beacon frames only.
    var beaconsOnly = make(tokens: false, beacons: true, reportsAll: true)
    #expect(
      beaconsOnly.deviceChanged(Self.path, Self.advert(), at: at(1))
        == [.beacons(device, path: Self.path)])
  }

  @Test("an RSSI-only report repeats the device's last frame; an invalidated RSSI is unknown")
  func cacheKeepsAndForgets() {
    var reports = make()
    _ = reports.deviceChanged(Self.path, Self.advert(), at: at(1))
    let repeated = reports.deviceChanged(Self.path, ["RSSI": .int16(-70)], at: at(2))
    let device = try! #require(reports.devices[Self.path])
    #expect(repeated == [.token(Self.frame, device)])
    #expect(device.rssi == -70 && device.lastData == at(2))
    #expect(
      reports.deviceChanged(Self.path, [:], invalidated: ["RSSI"], at: at(3)).isEmpty)
    #expect(reports.devices[Self.path]?.rssi == nil)
    #expect(reports.devices[Self.path]?.heard == false)
    #expect(reports.lastReport == at(2))
  }

  @Test("a removal by bluetoothd's timer under discovery is held, and a new report ends that")
  func removalFeedsPresence() {
    var reports = make()
    _ = reports.deviceChanged(Self.path, Self.advert(), at: at(0))
    reports.deviceRemoved(Self.path, at: at(30))
    #expect(reports.devices[Self.path] == nil)
    #expect(reports.presence.vanished[Self.path] != nil)
    #expect(reports.present(at: at(31)).map(\.path) == [Self.path])
    _ = reports.deviceChanged(Self.path, Self.advert(), at: at(32))
    #expect(reports.presence.vanished.isEmpty)
    // A device never seen: nothing to remove.
    reports.deviceRemoved(Self.other, at: at(33))
    #expect(reports.presence.vanished.isEmpty)
  }

  @Test("the monitor's report of a device new to it is a sighting, a repeat not")
  func monitorFound() {
    var reports = make(scan: .monitor(.tokens))
    _ = reports.deviceChanged(Self.path, Self.advert(), at: at(0))
    let device = try! #require(reports.devices[Self.path])
    #expect(reports.monitorFound(Self.path, at: at(1)) == [.token(Self.frame, device)])
    #expect(reports.monitorFound(Self.path, at: at(2)).isEmpty)
    // Unknown to bluetoothd: nothing to report.
    #expect(reports.monitorFound(Self.other, at: at(2)).isEmpty)
  }

  @Test("present devices: one token sighting a token, the beacon frames of each device")
  func presentReports() {
    var reports = make(beacons: true)
    _ = reports.deviceChanged(Self.path, Self.advert(), at: at(0))
    _ = reports.deviceChanged(Self.other, Self.advert(), at: at(0))
    let first = try! #require(reports.devices[Self.path])
    let second = try! #require(reports.devices[Self.other])
    let actions = reports.tick(at: at(1))
    let present = [
      PresenceStateMachine.Present(path: Self.path, device: first),
      PresenceStateMachine.Present(path: Self.other, device: second),
    ]
    #expect(actions == [.report(present)])
    #expect(
      reports.reports(of: present) == [
        .beacons(first, path: Self.path), .token(Self.frame, first),
        .beacons(second, path: Self.other),
      ])
  }

  @Test("a new bluetoothd: no device known, nothing held")
  func reset() {
    var reports = make()
    _ = reports.deviceChanged(Self.path, Self.advert(), at: at(0))
    reports.deviceRemoved(Self.path, at: at(30))
    _ = reports.deviceChanged(Self.other, Self.advert(), at: at(30))
    reports.reset()
    #expect(reports.devices.isEmpty)
    #expect(reports.presence.vanished.isEmpty)
    #expect(reports.present(at: at(31)).isEmpty)
  }
}
