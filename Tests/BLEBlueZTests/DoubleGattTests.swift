import BlueZTestSupport
import DBus
import Foundation
import Synchronization
import Testing
import TestSupport
import NearbyTesting

/// The double's GATT (Tests/Executables/bluez-double/BlueZDouble+Gatt.swift), driven over
/// D-Bus as bluetoothd 5.66 is: a GATT app registered on hci0 with a connectable advert, hci1
/// discovering it, `Device1.Connect`, then reads and writes through hci1's remote objects. In
/// the serialized double suite.
extension BlueZDoubleTests {
  /// hci0's device object on hci1 (a connectable advert goes out from hci0's public address).
  static let peripheralOnHci1 = try! DBusObjectPath("/org/bluez/hci1/dev_00_AA_01_00_00_00")
  /// hci1's device object on hci0 (the central, at hci1's public address).
  static let centralOnHci0 = try! DBusObjectPath("/org/bluez/hci0/dev_00_AA_01_00_00_01")
  static let remoteCharacteristic = try! DBusObjectPath(
    "/org/bluez/hci1/dev_00_AA_01_00_00_00/service000a/char000b")

  /// bluetoothd 5.66 counts a Write Request's handle in the value's length: at MTU 517 a
  /// value of 510 bytes reaches the app, one of 511 is refused with Invalid Length (found in
  /// the VM; GattPeerProfile.maximumWrite).
  @Test(.requires(.bluezDouble)) func aWriteRequestOver510BytesIsRefusedAsBluetoothd566Does()
    async throws
  {
    let control = try await DoubleControl.connect()
    defer { control.close() }
    let app = try await GattTestApp(bus: control.bus)
    defer { app.close() }
    try await app.register(on: "hci0", advertType: "peripheral")
    let central = try await GattCentral(bus: control.bus, adapter: "hci1")
    defer { central.close() }
    try await central.connect(Self.peripheralOnHci1)
    try await central.write(Self.remoteCharacteristic, Array(repeating: 1, count: 510))
    var refusal: DBusError?
    do {
      try await central.write(Self.remoteCharacteristic, Array(repeating: 2, count: 511))
    } catch let error as DBusError {
      refusal = error
    }
    #expect(refusal?.name.rawValue == "org.bluez.Error.InvalidArguments")
    #expect(refusal?.message == "Invalid Length")
    #expect(app.calls.map(\.value.count) == [510])
  }

  @Test(.requires(.bluezDouble)) func aConnectedCentralWritesAndReadsTheAppOfThePeripheral()
    async throws
  {
    let control = try await DoubleControl.connect()
    defer { control.close() }
    let app = try await GattTestApp(bus: control.bus)
    defer { app.close() }
    try await app.register(on: "hci0", advertType: "peripheral")
    let central = try await GattCentral(bus: control.bus, adapter: "hci1")
    defer { central.close() }
    try await central.connect(Self.peripheralOnHci1)

    let objects = try await central.objects(below: Self.peripheralOnHci1)
    let service = objects[try Self.peripheralOnHci1.appending("service000a")]
    #expect(service?["org.bluez.GattService1"]?["UUID"]?.string == GattTestApp.serviceUUID)
    #expect(service?["org.bluez.GattService1"]?["Primary"]?.bool == true)
    #expect(
      service?["org.bluez.GattService1"]?["Device"]?.objectPath == Self.peripheralOnHci1)
    let characteristic = objects[Self.remoteCharacteristic]?["org.bluez.GattCharacteristic1"]
    #expect(characteristic?["UUID"]?.string == GattTestApp.characteristicUUID)
    #expect(characteristic?["Flags"]?.elements?.compactMap(\.string) == ["read", "write"])
    #expect(characteristic?["MTU"] == .uint16(517))
    // The peripheral has a device object for the central, connected.
    #expect(
      try await central.connection.property(
        "Connected", interface: "org.bluez.Device1", of: "org.bluez", at: Self.centralOnHci0)
        == .boolean(true))

    let written = Array("hello over GATT".utf8)
    try await central.write(Self.remoteCharacteristic, written)
    #expect(try await central.read(Self.remoteCharacteristic) == written)
    let calls = app.calls
    #expect(calls.map(\.member) == ["WriteValue", "ReadValue"])
    for call in calls {
      #expect(call.options["device"]?.objectPath == Self.centralOnHci0)
      #expect(call.options["mtu"] == .uint16(517))
      #expect(call.options["link"]?.string == "LE")
      #expect(call.options["offset"] == nil)
      #expect(call.options["type"] == nil)
    }
    #expect(calls.first?.value == written)
    let stats = try await control.gattStats()
    #expect(stats == DoubleControl.GattStats(connects: 1, reads: 1, writes: 1))
  }

  /// At MTU 23 a 300-byte write is a long write (the app gets it whole, once) and reads are
  /// read longs: one `ReadValue` per 22 bytes, with `offset`; a value over 512 bytes is read
  /// as its first 512. At MTU 517 one read brings the 512.
  @Test(.requires(.bluezDouble)) func longValuesAreReadLongAndWrittenWholeAtASmallMTU() async throws
  {
    let control = try await DoubleControl.connect()
    defer { control.close() }
    try await control.setGattMTU(23)
    let app = try await GattTestApp(bus: control.bus)
    defer { app.close() }
    try await app.register(on: "hci0", advertType: "peripheral")
    let central = try await GattCentral(bus: control.bus, adapter: "hci1")
    defer { central.close() }
    try await central.connect(Self.peripheralOnHci1)
    #expect(
      try await central.connection.property(
        "MTU", interface: "org.bluez.GattCharacteristic1", of: "org.bluez",
        at: Self.remoteCharacteristic) == .uint16(23))

    let value = (0..<300).map { UInt8($0 % 251) }
    try await central.write(Self.remoteCharacteristic, value)
    #expect(app.calls.count == 1)
    #expect(app.calls.first?.value == value)
    #expect(app.calls.first?.options["offset"] == nil)
    #expect(app.calls.first?.options["mtu"] == .uint16(23))

    app.reset(value: value)
    #expect(try await central.read(Self.remoteCharacteristic) == value)
    // 300 bytes in 22-byte responses: 13 full ones, then 14 bytes.
    #expect(app.calls.map(\.offset) == Array(stride(from: 0, through: 286, by: 22)))

    let long = (0..<600).map { UInt8($0 % 253) }
    app.reset(value: long)
    #expect(try await central.read(Self.remoteCharacteristic) == Array(long.prefix(512)))
    #expect(app.calls.map(\.offset) == Array(stride(from: 0, through: 506, by: 22)))

    // Past 512 bytes, the server refuses the prepared write: the app sees nothing.
    app.reset(value: [])
    await #expect {
      try await central.write(Self.remoteCharacteristic, [UInt8](repeating: 1, count: 513))
    } throws: { error in
      (error as? DBusError)?.name == "org.bluez.Error.InvalidArguments"
        && (error as? DBusError)?.message == "Invalid Length"
    }
    #expect(app.calls.isEmpty)
    try await central.disconnect(Self.peripheralOnHci1)

    // A new link negotiates the MTU set now.
    try await control.setGattMTU(517)
    try await central.connect(Self.peripheralOnHci1)
    app.reset(value: long)
    #expect(try await central.read(Self.remoteCharacteristic) == Array(long.prefix(512)))
    #expect(app.calls.map(\.offset) == [0])
  }

  /// The app's errors reach the central as bluetoothd's client translates the ATT errors.
  @Test(.requires(.bluezDouble)) func appErrorsReachTheCentralAsATTErrors() async throws {
    let control = try await DoubleControl.connect()
    defer { control.close() }
    let app = try await GattTestApp(bus: control.bus)
    defer { app.close() }
    try await app.register(on: "hci0", advertType: "peripheral")
    let central = try await GattCentral(bus: control.bus, adapter: "hci1")
    defer { central.close() }
    try await central.connect(Self.peripheralOnHci1)
    let cases: [(DBusError, String, String)] = [
      (
        DBusError("org.bluez.Error.Failed", "0x81"), "org.bluez.Error.Failed",
        "Operation failed with ATT error: 0x81"
      ),
      (
        DBusError("org.bluez.Error.NotPermitted", ""), "org.bluez.Error.NotPermitted",
        "Write not permitted"
      ),
      (
        DBusError("org.bluez.Error.NotAuthorized", ""), "org.bluez.Error.NotAuthorized",
        "Operation Not Authorized"
      ),
      (
        DBusError("org.example.Error.Whatever", "x"), "org.bluez.Error.Failed",
        "Operation failed with ATT error: 0x0e"
      ),
    ]
    for (appError, name, message) in cases {
      app.failNext(appError)
      await #expect {
        try await central.write(Self.remoteCharacteristic, [1])
      } throws: { error in
        (error as? DBusError)?.name.rawValue == name && (error as? DBusError)?.message == message
      }
    }
  }

  @Test(.requires(.bluezDouble)) func aNonConnectableAdvertRefusesTheConnection() async throws {
    let control = try await DoubleControl.connect()
    defer { control.close() }
    let app = try await GattTestApp(bus: control.bus)
    defer { app.close() }
    try await app.register(on: "hci0", advertType: "broadcast")
    let central = try await GattCentral(bus: control.bus, adapter: "hci1")
    defer { central.close() }
    let device = try await central.waitForDevice { path in
      path.rawValue.hasPrefix("/org/bluez/hci1/dev_C0_DE_00_")
    }
    let start = ContinuousClock.now
    await #expect {
      try await central.call(device, "org.bluez.Device1", "Connect")
    } throws: { error in
      (error as? DBusError)?.name == "org.bluez.Error.Failed"
        && (error as? DBusError)?.message == "le-connection-abort-by-local"
    }
    #expect(ContinuousClock.now - start >= .milliseconds(200))
    #expect(
      try await central.connection.property(
        "Connected", interface: "org.bluez.Device1", of: "org.bluez", at: device)
        == .boolean(false))
    #expect(try await control.gattStats().connects == 0)
  }

  @Test(.requires(.bluezDouble)) func disconnectRemovesTheRemoteObjects() async throws {
    let control = try await DoubleControl.connect()
    defer { control.close() }
    let app = try await GattTestApp(bus: control.bus)
    defer { app.close() }
    try await app.register(on: "hci0", advertType: "peripheral")
    let central = try await GattCentral(bus: control.bus, adapter: "hci1")
    defer { central.close() }
    try await central.connect(Self.peripheralOnHci1)
    // The device, its service and its characteristic.
    #expect(try await central.objects(below: Self.peripheralOnHci1).count == 3)
    try await central.disconnect(Self.peripheralOnHci1)
    let objects = try await central.objects(below: Self.peripheralOnHci1)
    #expect(objects.keys.sorted() == [Self.peripheralOnHci1])
    let device = objects[Self.peripheralOnHci1]?["org.bluez.Device1"]
    #expect(device?["Connected"] == .boolean(false))
    #expect(device?["ServicesResolved"] == .boolean(false))
    // The device the peripheral had for the central went with the link.
    #expect(try await central.objects(below: Self.centralOnHci0).isEmpty)
    await #expect {
      try await central.call(Self.peripheralOnHci1, "org.bluez.Device1", "Disconnect")
    } throws: { error in
      (error as? DBusError)?.name == "org.bluez.Error.NotConnected"
    }
  }

  /// The app's client leaves the bus: its app and advert go, the link drops, and the
  /// device object (no advert any more) goes too.
  @Test(.requires(.bluezDouble)) func theLinkDropsWhenTheAppsClientLeaves() async throws {
    let control = try await DoubleControl.connect()
    defer { control.close() }
    let app = try await GattTestApp(bus: control.bus)
    try await app.register(on: "hci0", advertType: "peripheral")
    let central = try await GattCentral(bus: control.bus, adapter: "hci1")
    defer { central.close() }
    try await central.connect(Self.peripheralOnHci1)
    #expect(try await control.gattApps("hci0").count == 1)
    app.close()
    #expect(
      await eventually {
        (try? await central.objects(below: Self.peripheralOnHci1).isEmpty) == true
      })
    #expect(try await control.gattApps("hci0").isEmpty)
  }

  /// While connected, the device stays after its advert stops; `Disconnect` then removes it.
  @Test(.requires(.bluezDouble)) func aConnectedDeviceOutlivesItsAdvert() async throws {
    let control = try await DoubleControl.connect()
    defer { control.close() }
    let app = try await GattTestApp(bus: control.bus)
    defer { app.close() }
    try await app.register(on: "hci0", advertType: "peripheral")
    let central = try await GattCentral(bus: control.bus, adapter: "hci1")
    defer { central.close() }
    try await central.connect(Self.peripheralOnHci1)
    // A bystander discovering on hci2 hears the same advert, unconnected.
    let bystander = try await GattCentral(bus: control.bus, adapter: "hci2")
    defer { bystander.close() }
    let heardOnHci2 = try await bystander.waitForDevice { _ in true }
    try await app.unregisterAdvert(on: "hci0")
    // The bystander's device goes with the advert: once it went, the double has dropped
    // what the advert's end drops, and the connected device is still there.
    #expect(
      await eventually { (try? await bystander.objects(below: heardOnHci2).isEmpty) == true })
    // The device, its service and its characteristic.
    #expect(try await central.objects(below: Self.peripheralOnHci1).count == 3)
    #expect(try await central.read(Self.remoteCharacteristic) == [])
    try await central.disconnect(Self.peripheralOnHci1)
    #expect(
      await eventually {
        (try? await central.objects(below: Self.peripheralOnHci1).isEmpty) == true
      })
  }

  /// Two peers that both advertise (connectable) and discover, as a peer transport runs: the
  /// peripheral's device for the central is the one it has from hearing the central's advert
  /// (same public address), connected while linked and kept after, with the central's app
  /// mirrored below it (reverse service discovery). A connectable advert is not refused
  /// while its adapter scans.
  @Test(.requires(.bluezDouble)) func twoPeersThatBothAdvertiseShareOneDeviceObjectPerSide()
    async throws
  {
    let control = try await DoubleControl.connect()
    defer { control.close() }
    let peripheralPeer = try await GattCentral(bus: control.bus, adapter: "hci0")
    defer { peripheralPeer.close() }
    let app = try await GattTestApp(bus: control.bus)
    defer { app.close() }
    try await app.register(on: "hci0", advertType: "peripheral")
    let otherApp = try await GattTestApp(bus: control.bus)
    defer { otherApp.close() }
    try await otherApp.register(on: "hci1", advertType: "peripheral")
    let central = try await GattCentral(bus: control.bus, adapter: "hci1")
    defer { central.close() }
    _ = try await peripheralPeer.waitForDevice { $0 == Self.centralOnHci0 }
    try await central.connect(Self.peripheralOnHci1)
    #expect(
      await eventually {
        (try? await peripheralPeer.connection.property(
          "ServicesResolved", interface: "org.bluez.Device1", of: "org.bluez",
          at: Self.centralOnHci0)) == .boolean(true)
      })
    let mirrored = try Self.centralOnHci0.appending("service000a").appending("char000b")
    try await peripheralPeer.write(mirrored, [7, 7])
    #expect(otherApp.calls.first?.options["device"]?.objectPath == Self.peripheralOnHci1)
    try await central.disconnect(Self.peripheralOnHci1)
    let kept = try await peripheralPeer.objects(below: Self.centralOnHci0)
    #expect(kept.keys.sorted() == [Self.centralOnHci0])
    #expect(kept[Self.centralOnHci0]?["org.bluez.Device1"]?["Connected"] == .boolean(false))
    #expect(kept[Self.centralOnHci0]?["org.bluez.Device1"]?["RSSI"] != nil)
  }

  @Test(.requires(.bluezDouble)) func registrationErrorsAreBluetoothds() async throws {
    let control = try await DoubleControl.connect()
    defer { control.close() }
    let app = try await GattTestApp(bus: control.bus)
    defer { app.close() }
    try await app.registerApplication(on: "hci0")
    await #expect {
      try await app.registerApplication(on: "hci0")
    } throws: { error in
      (error as? DBusError)?.name == "org.bluez.Error.AlreadyExists"
    }
    try await app.call("UnregisterApplication", [.objectPath(GattTestApp.root)], on: "hci0")
    await #expect {
      try await app.call("UnregisterApplication", [.objectPath(GattTestApp.root)], on: "hci0")
    } throws: { error in
      (error as? DBusError)?.name == "org.bluez.Error.DoesNotExist"
    }
    // An object manager with no service below it.
    let empty = try DBusObjectPath("/test/empty")
    await app.connection.addObjectManager(at: empty)
    try await app.connection.export(
      DBusInterface("org.example.Nothing1", properties: [DBusProperty("X", .boolean(true))]),
      at: try empty.appending("thing"))
    await #expect {
      try await app.call(
        "RegisterApplication", [.objectPath(empty), .vardict([:])], on: "hci0")
    } throws: { error in
      (error as? DBusError)?.name == "org.bluez.Error.Failed"
        && (error as? DBusError)?.message == "No valid service object found"
    }
  }
}

/// A GATT app as a peer transport exports it: an object manager at ``root``, one primary
/// service and one "read"/"write" characteristic that keeps what is written (honouring
/// `offset`) and records every call; and a `LEAdvertisement1`.
final class GattTestApp: Sendable {
  static let root = try! DBusObjectPath("/test/gatt")
  static let service = try! DBusObjectPath("/test/gatt/service0")
  static let characteristic = try! DBusObjectPath("/test/gatt/service0/char0")
  static let advert = try! DBusObjectPath("/test/advert0")
  static let serviceUUID = "6e6f0001-0000-4000-8000-000000000001"
  static let characteristicUUID = "6e6f0002-0000-4000-8000-000000000001"

  struct Call: Sendable {
    var member: String
    var options: [String: DBusValue]
    var value: [UInt8]
    var offset: Int { Int(options["offset"]?.integer ?? 0) }
  }

  private struct State {
    var value: [UInt8] = []
    var calls: [Call] = []
    var failure: DBusError?
  }

  let connection: DBusConnection
  private let state = Mutex(State())

  init(bus: DBusBus) async throws {
    connection = try await DBusConnection(bus)
    await connection.addObjectManager(at: Self.root)
    try await connection.export(
      DBusInterface(
        "org.bluez.GattService1",
        properties: [
          DBusProperty("UUID", .string(Self.serviceUUID)), DBusProperty("Primary", .boolean(true)),
        ]), at: Self.service)
    try await connection.export(
      DBusInterface(
        "org.bluez.GattCharacteristic1",
        methods: [
          DBusMethod("ReadValue", input: "a{sv}", output: "ay") { [self] call in
            let options = call.body[0].stringDictionary ?? [:]
            return try self.state.withLock { state in
              state.calls.append(Call(member: "ReadValue", options: options, value: []))
              if let failure = state.failure {
                state.failure = nil
                throw failure
              }
              let offset = Int(options["offset"]?.integer ?? 0)
              return [.bytes(Array(state.value.dropFirst(offset)))]
            }
          },
          DBusMethod("WriteValue", input: "aya{sv}") { [self] call in
            let value = call.body[0].bytes ?? []
            let options = call.body[1].stringDictionary ?? [:]
            try self.state.withLock { state in
              state.calls.append(Call(member: "WriteValue", options: options, value: value))
              if let failure = state.failure {
                state.failure = nil
                throw failure
              }
              let offset = Int(options["offset"]?.integer ?? 0)
              state.value = Array(state.value.prefix(offset)) + value
            }
            return []
          },
        ],
        properties: [
          DBusProperty("UUID", .string(Self.characteristicUUID)),
          DBusProperty("Service", .objectPath(Self.service)),
          DBusProperty("Flags", .strings(["read", "write"])),
        ]), at: Self.characteristic)
  }

  var calls: [Call] { state.withLock(\.calls) }

  /// Forgets the calls and sets the characteristic's value.
  func reset(value: [UInt8]) {
    state.withLock {
      $0.calls = []
      $0.value = value
    }
  }

  /// The next call to the characteristic answers this error.
  func failNext(_ error: DBusError) { state.withLock { $0.failure = error } }

  /// Registers the app, then an advert of `advertType` on the adapter.
  func register(on adapter: String, advertType: String) async throws {
    try await registerApplication(on: adapter)
    try await connection.export(
      DBusInterface(
        "org.bluez.LEAdvertisement1",
        methods: [DBusMethod("Release") { _ in [] }],
        properties: [
          DBusProperty("Type", .string(advertType)),
          DBusProperty("ServiceUUIDs", .strings([Self.serviceUUID])),
        ]), at: Self.advert)
    _ = try await connection.call(
      destination: "org.bluez", path: try DBusObjectPath("/org/bluez/\(adapter)"),
      interface: "org.bluez.LEAdvertisingManager1", member: "RegisterAdvertisement",
      [.objectPath(Self.advert), .vardict([:])])
  }

  func registerApplication(on adapter: String) async throws {
    try await call("RegisterApplication", [.objectPath(Self.root), .vardict([:])], on: adapter)
  }

  func unregisterAdvert(on adapter: String) async throws {
    _ = try await connection.call(
      destination: "org.bluez", path: try DBusObjectPath("/org/bluez/\(adapter)"),
      interface: "org.bluez.LEAdvertisingManager1", member: "UnregisterAdvertisement",
      [.objectPath(Self.advert)])
  }

  /// Calls a `GattManager1` method of the adapter.
  func call(_ member: String, _ arguments: [DBusValue], on adapter: String) async throws {
    _ = try await connection.call(
      destination: "org.bluez", path: try DBusObjectPath("/org/bluez/\(adapter)"),
      interface: "org.bluez.GattManager1", member: member, arguments)
  }

  func close() { connection.close() }
}

/// A client of the double on the central's side: discovers on its adapter, connects, reads
/// and writes remote characteristics.
struct GattCentral {
  let connection: DBusConnection
  let adapter: DBusObjectPath

  init(bus: DBusBus, adapter: String) async throws {
    connection = try await DBusConnection(bus)
    self.adapter = try DBusObjectPath("/org/bluez/\(adapter)")
    try await call(self.adapter, "org.bluez.Adapter1", "StartDiscovery")
  }

  @discardableResult
  func call(
    _ path: DBusObjectPath, _ interface: String, _ member: String, _ arguments: [DBusValue] = []
  ) async throws -> [DBusValue] {
    try await connection.call(
      destination: "org.bluez", path: path, interface: interface, member: member, arguments)
  }

  /// The double's objects at or below `path`.
  func objects(below path: DBusObjectPath) async throws -> DBusConnection.ManagedObjects {
    try await connection.managedObjects(of: "org.bluez").filter { $0.key.isDescendant(of: path) }
  }

  /// Waits for a device object of the adapter whose path `matches`.
  func waitForDevice(_ matches: @escaping @Sendable (DBusObjectPath) -> Bool) async throws
    -> DBusObjectPath
  {
    var found: DBusObjectPath?
    _ = await eventually {
      found = try? await connection.managedObjects(of: "org.bluez").keys.first {
        $0.isDescendant(of: adapter) && $0 != adapter && matches($0)
      }
      return found != nil
    }
    return try #require(found)
  }

  /// Waits for the device, connects, waits for `ServicesResolved`.
  func connect(_ device: DBusObjectPath) async throws {
    _ = try await waitForDevice { $0 == device }
    try await call(device, "org.bluez.Device1", "Connect")
    #expect(
      await eventually {
        (try? await connection.property(
          "ServicesResolved", interface: "org.bluez.Device1", of: "org.bluez", at: device))
          == .boolean(true)
      })
  }

  func disconnect(_ device: DBusObjectPath) async throws {
    try await call(device, "org.bluez.Device1", "Disconnect")
  }

  func write(_ characteristic: DBusObjectPath, _ value: [UInt8]) async throws {
    try await call(
      characteristic, "org.bluez.GattCharacteristic1", "WriteValue", [.bytes(value), .vardict([:])]
    )
  }

  func read(_ characteristic: DBusObjectPath) async throws -> [UInt8] {
    try await call(characteristic, "org.bluez.GattCharacteristic1", "ReadValue", [.vardict([:])])
      .first?.bytes ?? []
  }

  func close() { connection.close() }
}
