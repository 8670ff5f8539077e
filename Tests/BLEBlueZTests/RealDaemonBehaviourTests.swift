import BLEBlueZ
import BlueZTestSupport
import DBus
import Testing
import TestSupport
import Tokens
import NearbyTesting

/// The double against what the real bluetoothd did in the VM (docs/bluez-vm-findings.md): the
/// answers, properties and signals a client sees, checked through a plain D-Bus client. In
/// the serialized double suite.
extension BlueZDoubleTests {
  /// A plain BlueZ client on the double's bus that records every signal bluetoothd sends.
  struct Client {
    let connection: DBusConnection
    let signals: StreamRecorder<DBusMessage>

    static func connect(_ control: DoubleControl) async throws -> Client {
      let connection = try await DBusConnection(control.bus)
      let signals = try await connection.signals(matching: DBusMatchRule(sender: "org.bluez"))
      return Client(connection: connection, signals: StreamRecorder(signals))
    }

    @discardableResult
    func call(
      _ adapter: String, _ interface: String, _ member: String, _ arguments: [DBusValue] = [],
      timeout: Duration = .seconds(5)
    ) async throws -> [DBusValue] {
      try await connection.call(
        destination: "org.bluez", path: try DBusObjectPath("/org/bluez/\(adapter)"),
        interface: interface, member: member, arguments, timeout: timeout)
    }

    /// Starts discovery on `adapter`, with `filter` set first (the medium's, by default; `nil`
    /// sets none).
    func discover(
      _ adapter: String,
      filter: [String: DBusValue]? = ["Transport": .string("le"), "DuplicateData": .boolean(true)]
    ) async throws {
      if let filter {
        try await call(adapter, "org.bluez.Adapter1", "SetDiscoveryFilter", [.vardict(filter)])
      }
      try await call(adapter, "org.bluez.Adapter1", "StartDiscovery")
    }

    /// The Device1 objects under `adapter`, with their properties.
    func devices(_ adapter: String) async throws -> [DBusObjectPath: [String: DBusValue]] {
      let objects = try await connection.managedObjects(of: "org.bluez")
      var found: [DBusObjectPath: [String: DBusValue]] = [:]
      for (path, interfaces) in objects {
        guard let device = interfaces["org.bluez.Device1"],
          path.isDescendant(of: try DBusObjectPath("/org/bluez/\(adapter)"))
        else { continue }
        found[path] = device
      }
      return found
    }

    /// The `PropertiesChanged` of Device1 objects recorded since `since`: (path, changed,
    /// invalidated).
    func deviceChanges(since: ContinuousClock.Instant) -> [(
      path: DBusObjectPath, changed: [String: DBusValue], invalidated: [String]
    )] {
      signals.elements(since: since).compactMap { signal in
        guard signal.member == "PropertiesChanged", let path = signal.path,
          let body = try? signal.arguments("sa{sv}as"), body[0].string == "org.bluez.Device1",
          let changed = body[1].stringDictionary
        else { return nil }
        return (path, changed, body[2].elements?.compactMap(\.string) ?? [])
      }
    }

    func close() { connection.close() }
  }

  /// Item 10 and its correction: bluetoothd sends PropertiesChanged for the properties whose
  /// value changed, and more when a discovery filter asks. Without a filter, a device at a
  /// constant RSSI (127, as btvirt's controllers send) whose data never changes is silent after
  /// its InterfacesAdded, and one whose RSSI jitters gets the RSSI alone. Once a client
  /// discovers with the medium's filter (`Transport le`, `DuplicateData true`), every report
  /// re-sends the RSSI and the data of both, changed or not.
  @Test(.requires(.bluezDouble)) func repeatsCarryWhatChangedAndWhatTheFilterAsks() async throws {
    let control = try await DoubleControl.connect()
    defer { control.close() }
    let still = try await SimulatedBeacon.start(
      SampleBeacons.eddystoneUID, on: "hci0", bus: control.bus)
    let moving = try await SimulatedBeacon.start(
      SampleBeacons.iBeacon, on: "hci2", bus: control.bus)
    try await control.setRSSI(advertiser: "hci0", rssi: 127)
    let client = try await Client.connect(control)
    defer { client.close() }
    try await client.discover("hci1", filter: nil)
    #expect(await eventually { (try? await client.devices("hci1").count) == 2 })
    let devices = try await client.devices("hci1")
    let stillPath = try #require(
      devices.first { $0.value["ServiceData"]?.stringDictionary?.isEmpty == false }?.key)
    let stillDevice = try #require(devices[stillPath])
    #expect(stillDevice["RSSI"] == .int16(127))
    // Item 9: the advert's AD flags ("BR/EDR not supported" for a broadcast advert).
    #expect(stillDevice["AdvertisingFlags"]?.bytes == [0x04])
    // Signals arrive in the order sent: once a report of the moving device came after the
    // devices were read, whatever the still device sent while it appeared is behind us.
    let appeared = ContinuousClock.now
    #expect(
      await client.signals.until { _ in
        client.deviceChanges(since: appeared).contains { $0.path != stillPath }
      })
    // Ten reports of the moving device (about a second of them): the double reports every
    // device in each cycle, so the still device had as many chances to send.
    let from = ContinuousClock.now
    #expect(
      await client.signals.until { _ in
        client.deviceChanges(since: from).filter { $0.path != stillPath }.count >= 10
      })
    let changes = client.deviceChanges(since: from)
    #expect(!changes.contains { $0.path == stillPath }, "the still device sent \(changes)")
    let moves = changes.filter { $0.path != stillPath }
    #expect(!moves.isEmpty)
    #expect(moves.allSatisfy { Set($0.changed.keys) == ["RSSI"] })
    // Heard again and again, the still device is kept (bluetoothd re-arms its timer).
    #expect(try await client.devices("hci1")[stillPath] != nil)

    // A second client discovers with the medium's filter: from now on every report re-sends
    // RSSI and data, the still device's included (about 10 reports a second each).
    let filtered = try await Client.connect(control)
    defer { filtered.close() }
    let filtering = ContinuousClock.now
    try await filtered.discover("hci1")
    // The double takes the filter before it answers StartDiscovery, and the still device was
    // silent before it: its first change is the first report under the filter, and every
    // signal after it was sent under the filter too.
    #expect(
      await client.signals.until { _ in
        client.deviceChanges(since: filtering).contains { $0.path == stillPath }
      })
    let since = ContinuousClock.now
    #expect(
      await client.signals.until { _ in
        let resent = client.deviceChanges(since: since)
        return resent.filter { $0.path == stillPath }.count >= 5
          && resent.filter { $0.path != stillPath }.count >= 5
      })
    let resent = client.deviceChanges(since: since)
    let stillResent = resent.filter { $0.path == stillPath }
    #expect(stillResent.count >= 5, "the still device sent \(stillResent.count) changes")
    #expect(stillResent.allSatisfy { Set($0.changed.keys) == ["RSSI", "ServiceData"] })
    #expect(stillResent.allSatisfy { $0.changed["RSSI"] == .int16(127) })
    let movesResent = resent.filter { $0.path != stillPath }
    #expect(movesResent.count >= 5)
    #expect(movesResent.allSatisfy { Set($0.changed.keys) == ["RSSI", "ManufacturerData"] })
    await still.stop()
    await moving.stop()
  }

  /// Item 11: the end of an adapter's LAST discovery session invalidates each device's RSSI
  /// (PropertiesChanged with RSSI in the invalidated list), removes the devices, then sets
  /// Discovering false; while another client still discovers, the devices stay.
  @Test(.requires(.bluezDouble)) func theLastStopDiscoveryInvalidatesRSSIAndRemovesDevices()
    async throws
  {
    let control = try await DoubleControl.connect()
    defer { control.close() }
    let beacon = try await SimulatedBeacon.start(
      SampleBeacons.eddystoneUID, on: "hci0", bus: control.bus)
    let first = try await Client.connect(control)
    defer { first.close() }
    let second = try await Client.connect(control)
    defer { second.close() }
    try await first.discover("hci1")
    try await second.discover("hci1")
    #expect(await eventually { (try? await first.devices("hci1").count) == 1 })
    let path = try #require(try await first.devices("hci1").keys.first)
    let firstStopped = ContinuousClock.now
    try await first.call("hci1", "org.bluez.Adapter1", "StopDiscovery")
    // The second client's discovery goes on: a report of the device (its data re-sent, as the
    // medium's filter asks) comes after anything the first stop sent, so once it arrived, the
    // stop invalidated and removed nothing.
    #expect(
      await first.signals.until { _ in
        first.deviceChanges(since: firstStopped).contains { $0.path == path && !$0.changed.isEmpty }
      })
    #expect(try await first.devices("hci1")[path] != nil)
    #expect(!first.deviceChanges(since: firstStopped).contains { !$0.invalidated.isEmpty })
    #expect(
      !first.signals.elements(since: firstStopped).contains {
        $0.member == "InterfacesRemoved" && (try? $0.arguments("oas"))?.first?.objectPath == path
      })
    let stopped = ContinuousClock.now
    try await second.call("hci1", "org.bluez.Adapter1", "StopDiscovery")
    #expect(await eventually { (try? await first.devices("hci1").isEmpty) == true })
    let signals = first.signals.elements(since: stopped)
    let invalidated = signals.firstIndex { signal in
      guard signal.member == "PropertiesChanged", signal.path == path,
        let body = try? signal.arguments("sa{sv}as")
      else { return false }
      return body[1].stringDictionary?.isEmpty == true
        && body[2].elements?.compactMap(\.string) == ["RSSI"]
    }
    let removed = signals.firstIndex {
      $0.member == "InterfacesRemoved" && (try? $0.arguments("oas"))?.first?.objectPath == path
    }
    let notDiscovering = signals.firstIndex { signal in
      guard signal.member == "PropertiesChanged",
        let body = try? signal.arguments("sa{sv}as"), body[0].string == "org.bluez.Adapter1"
      else { return false }
      return body[1].stringDictionary?["Discovering"] == .boolean(false)
    }
    #expect(invalidated != nil && removed != nil && notDiscovering != nil)
    if let invalidated, let removed, let notDiscovering {
      #expect(invalidated < removed && removed < notDiscovering)
    }
    await beacon.stop()
  }

  /// bluetoothd removes a temporary device it has not heard for TemporaryTimeout (30 s by
  /// default), so a device stays a while after its advert stops (`SetTemporaryTimeout`; the
  /// double's default removes it at once).
  @Test(.requires(.bluezDouble)) func aDeviceStaysForTheTemporaryTimeoutAfterItsAdvertStops()
    async throws
  {
    let control = try await DoubleControl.connect()
    defer { control.close() }
    try await control.setTemporaryTimeout(.milliseconds(1500))
    let beacon = try await SimulatedBeacon.start(
      SampleBeacons.eddystoneUID, on: "hci0", bus: control.bus)
    let client = try await Client.connect(control)
    defer { client.close() }
    try await client.discover("hci1")
    #expect(await eventually { (try? await client.devices("hci1").count) == 1 })
    await beacon.stop()
    // The lingering is measured: from the advert's end to the device's removal. Its last
    // report came at most one report interval (100 ms) before the advert ended, so the device
    // goes 1.4–1.5 s after `stopped` (less the time `stop()` took); at once without the timeout.
    let stopped = ContinuousClock.now
    #expect(await eventually { (try? await client.devices("hci1").isEmpty) == true })
    let lingered = ContinuousClock.now - stopped
    #expect(lingered >= .milliseconds(1000), "removed \(lingered) after its advert stopped")
  }

  /// Items 2, 4, 7, 14, 15 and 17: objects, properties and errors as bluetoothd 5.66 has them.
  @Test(.requires(.bluezDouble)) func objectsAndErrorsAsBluetoothd() async throws {
    let control = try await DoubleControl.connect()
    defer { control.close() }
    let client = try await Client.connect(control)
    defer { client.close() }
    let filters = try await client.call("hci0", "org.bluez.Adapter1", "GetDiscoveryFilters")
    #expect(filters.first?.elements?.compactMap(\.string).contains("Pattern") == true)
    let bogus = await #expect(throws: DBusError.self) {
      try await client.call(
        "hci0", "org.bluez.Adapter1", "SetDiscoveryFilter", [.vardict(["Bogus": .boolean(true)])])
    }
    #expect(bogus?.name.rawValue == "org.bluez.Error.InvalidArguments")
    let objects = try await client.connection.managedObjects(of: "org.bluez")
    let hci0 = try #require(objects[try DBusObjectPath("/org/bluez/hci0")])
    #expect(hci0["org.bluez.Adapter1"]?["PowerState"] == .string("on"))
    let advertising = try #require(hci0["org.bluez.LEAdvertisingManager1"])
    #expect(
      advertising["SupportedCapabilities"]?.stringDictionary
        == ["MaxAdvLen": .byte(31), "MaxScnRspLen": .byte(31)])
    #expect(advertising["SupportedFeatures"] == .strings([]))
    #expect(advertising["SupportedSecondaryChannels"] == nil)
    try await control.setPowered("hci0", false)
    #expect(
      await eventually {
        let state = try? await client.connection.call(
          destination: "org.bluez", path: try DBusObjectPath("/org/bluez/hci0"),
          interface: "org.freedesktop.DBus.Properties", member: "Get",
          [.string("org.bluez.Adapter1"), .string("PowerState")])
        return state?.first?.unwrapped == .string("off")
      })
    let missing = await #expect(throws: DBusError.self) {
      try await client.connection.call(
        destination: "org.bluez", path: try DBusObjectPath("/org/bluez/hci9"),
        interface: "org.freedesktop.DBus.Properties", member: "Get",
        [.string("org.bluez.Adapter1"), .string("Powered")])
    }
    #expect(missing?.name == .unknownObject)
    // Item 15: RegisterAdvertisement of an object the caller does not export is never
    // answered; the caller's own timeout ends it.
    let unanswered = await #expect(throws: DBusError.self) {
      try await client.call(
        "hci1", "org.bluez.LEAdvertisingManager1", "RegisterAdvertisement",
        [.objectPath(try DBusObjectPath("/org/nearby/none")), .vardict([:])],
        timeout: .seconds(1))
    }
    #expect(unanswered?.name == .noReply)
  }
}
