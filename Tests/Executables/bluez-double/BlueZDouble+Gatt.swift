import DBus
import Foundation

/// GATT over the simulated air, as bluetoothd 5.66 offers it on D-Bus: `GattManager1` on each
/// adapter (a client's GATT app), `Device1.Connect`/`Disconnect` making LE links between the
/// double's adapters, and below a connected device the remote database (`GattService1`,
/// `GattCharacteristic1`) whose `ReadValue`/`WriteValue` the double carries to the app on the
/// other adapter with the options bluetoothd gives an app (src/gatt-database.c
/// `append_options`), the ATT limits (MTU, 512-byte values, read long, prepared writes) and
/// the error translations of both sides.
extension BlueZDouble {
  static let gattManagerInterface = "org.bluez.GattManager1"
  static let gattServiceInterface = "org.bluez.GattService1"
  static let gattCharacteristicInterface = "org.bluez.GattCharacteristic1"
  /// How long a connection attempt to a device that does not take one (a non-connectable or
  /// stopped advert) lasts before it fails. Real bluetoothd waits for the kernel's attempt to
  /// time out (seconds); the double keeps tests short.
  static let connectAbort = Duration.milliseconds(200)
  /// How long after `Connect`'s answer the service discovery of both ends ends
  /// (`ServicesResolved`): bluetoothd answers `Connect` when the ATT channel is up, then
  /// discovers.
  static let discoveryTime = Duration.milliseconds(20)
  /// The first handle the double gives an app's service in its adapter's database.
  static let firstAppHandle: UInt16 = 0x000a
  /// How long the double waits for an app's answer (libdbus's default call timeout, which
  /// bluetoothd's calls to apps use).
  static let appTimeout = Duration.seconds(25)

  // MARK: GattManager1

  func exportGattManager(_ name: String) async throws {
    guard let connection, let adapter = adapters[name] else { return }
    try await connection.export(
      DBusInterface(
        Self.gattManagerInterface,
        methods: [
          DBusMethod("RegisterApplication", input: "oa{sv}") { [weak self] call in
            guard let self, let root = call.body[0].objectPath else { return [] }
            try await self.registerApplication(name, owner: call.sender ?? "", root: root)
            return []
          },
          DBusMethod("UnregisterApplication", input: "o") { [weak self] call in
            guard let self, let root = call.body[0].objectPath else { return [] }
            try await self.unregisterApplication(name, owner: call.sender ?? "", root: root)
            return []
          },
        ]), at: adapter.path)
  }

  /// Reads the app through the client's ObjectManager at `root`, as bluetoothd does, and
  /// keeps its services and characteristics. bluetoothd 5.66's answers: `AlreadyExists` for
  /// the same (client, root) again, `Failed` "No object received" when the ObjectManager
  /// gives nothing (or cannot be read), `Failed` "No valid service object found" when no
  /// `GattService1` is among the objects.
  func registerApplication(_ name: String, owner: String, root: DBusObjectPath) async throws {
    _ = try adapter(name)
    let key = AdvertKey(owner: owner, path: root)
    guard gatt.apps[name]?[key] == nil else {
      throw DBusError(BlueZErrors.alreadyExists, "Already Exists")
    }
    guard let connection else { throw DBusError(BlueZErrors.failed, "restarting") }
    let objects: DBusConnection.ManagedObjects
    do {
      objects = try await connection.managedObjects(of: owner, at: root, timeout: .seconds(2))
    } catch {
      throw DBusError(BlueZErrors.failed, "No object received")
    }
    guard !objects.isEmpty else { throw DBusError(BlueZErrors.failed, "No object received") }
    let app = GattApp(owner: owner, root: root, objects: objects)
    guard !app.services.isEmpty else {
      throw DBusError(BlueZErrors.failed, "No valid service object found")
    }
    guard gatt.apps[name]?[key] == nil else {
      throw DBusError(BlueZErrors.alreadyExists, "Already Exists")
    }
    gatt.apps[name, default: [:]][key] = app
    await appsChanged(on: name)
  }

  func unregisterApplication(_ name: String, owner: String, root: DBusObjectPath) async throws {
    _ = try adapter(name)
    guard gatt.apps[name]?.removeValue(forKey: AdvertKey(owner: owner, path: root)) != nil
    else { throw DBusError(BlueZErrors.doesNotExist, "Does Not Exist") }
    await appsChanged(on: name)
  }

  /// Forgets the apps of a client that left the bus.
  func gattClientLeft(_ client: String) async {
    for name in gatt.apps.keys.sorted() {
      let before = gatt.apps[name]?.count ?? 0
      let kept = gatt.apps[name]?.filter { $0.key.owner != client } ?? [:]
      gatt.apps[name] = kept
      if kept.count != before { await appsChanged(on: name) }
    }
  }

  /// An adapter's apps changed: a link whose peripheral is that adapter drops when it has no
  /// app left (the double's rule: the peripheral's GATT server is gone); otherwise the
  /// remote objects that mirror the adapter's apps are made again (bluetoothd's Service
  /// Changed, simplified: removed, then added).
  func appsChanged(on name: String) async {
    for (id, link) in gatt.links.sorted(by: { $0.key < $1.key }) {
      if link.peripheral.adapter == name, gatt.apps[name]?.isEmpty ?? true {
        await dropLink(id)
        continue
      }
      for side in GattLink.Side.allCases
      where link[side.other].adapter == name && link[side].servicesResolved {
        await mirror(id, side)
      }
    }
  }

  // MARK: Links

  /// `Device1.Connect`: on a device of adapter H for a connectable ("peripheral") advert of
  /// a powered adapter A, makes the link (both ends' `Connected` true; on A a device object
  /// for H, at H's address), answers, then resolves both ends' services. Already connected:
  /// answered at once (bluetoothd does). A device for a non-connectable advert, or whose
  /// advert stopped (a lingering device), fails after ``connectAbort`` with `Failed`
  /// "le-connection-abort-by-local"; on an adapter that is off, `NotReady`.
  func connectDevice(_ path: DBusObjectPath) async throws {
    guard gatt.link(at: path) == nil else { return }
    guard let device = devices[path], let hearer = adapters[device.hearing] else {
      try await Task.sleep(for: Self.connectAbort)
      throw DBusError(BlueZErrors.failed, "le-connection-abort-by-local")
    }
    guard hearer.present, hearer.powered else {
      throw DBusError(BlueZErrors.notReady, "Resource Not Ready")
    }
    guard let advert = advert(of: device), advert.type == "peripheral",
      let advertiser = adapters[device.advertiser], advertiser.present, advertiser.powered
    else {
      try await Task.sleep(for: Self.connectAbort)
      throw DBusError(BlueZErrors.failed, "le-connection-abort-by-local")
    }
    let peer = try DBusObjectPath(
      "\(advertiser.path.rawValue)/dev_\(hearer.address.replacingOccurrences(of: ":", with: "_"))"
    )
    guard gatt.link(at: path) == nil, gatt.link(at: peer) == nil else { return }
    let id = gatt.nextLink
    gatt.nextLink += 1
    gatt.links[id] = GattLink(
      id: id, central: LinkEnd(adapter: hearer.name, device: path),
      peripheral: LinkEnd(adapter: advertiser.name, device: peer), mtu: gatt.mtu)
    gatt.connects += 1
    if devices[peer] == nil, !gatt.peerDevices.contains(peer) {
      gatt.peerDevices.insert(peer)
      try? await connection?.export(peerDeviceInterface(peer, on: advertiser), at: peer)
    }
    await setDeviceProperty("Connected", true, at: peer)
    await setDeviceProperty("Connected", true, at: path)
    Task { [weak self] in
      try? await Task.sleep(for: Self.discoveryTime)
      await self?.resolveServices(id)
    }
  }

  /// `Device1.Disconnect` on either end: drops the link; `NotConnected` when there is none.
  func disconnectDevice(_ path: DBusObjectPath) async throws {
    guard let link = gatt.link(at: path) else {
      throw DBusError(BlueZErrors.notConnected, "Not Connected")
    }
    await dropLink(link.id)
  }

  /// Drops every link with an end on the adapter (it powered off or went away).
  func dropLinks(of name: String) async {
    for (id, link) in gatt.links.sorted(by: { $0.key < $1.key })
    where link.central.adapter == name || link.peripheral.adapter == name {
      await dropLink(id)
    }
  }

  /// Ends a link as both ends' bluetoothd report a disconnection: the remote objects go
  /// (InterfacesRemoved), then `ServicesResolved` and `Connected` turn false; the device the
  /// double made on the peripheral for the central goes too (unless the peripheral hears an
  /// advert of the central at that address). Devices whose advert stopped meanwhile go.
  func dropLink(_ id: Int) async {
    guard let link = gatt.links.removeValue(forKey: id), let connection else { return }
    for side in GattLink.Side.allCases {
      let end = link[side]
      for path in end.objects.reversed() { await connection.unexport(at: path) }
      await setDeviceProperty("ServicesResolved", false, at: end.device)
      await setDeviceProperty("Connected", false, at: end.device)
    }
    if gatt.peerDevices.remove(link.peripheral.device) != nil,
      devices[link.peripheral.device] == nil
    {
      await connection.unexport(at: link.peripheral.device)
    }
    await syncAir()
  }

  /// Clears apps, links (dropped as disconnections), the MTU and the counters.
  func resetGatt() async {
    for id in gatt.links.keys.sorted() { await dropLink(id) }
    gatt = GattState()
  }

  private func setDeviceProperty(_ name: String, _ on: Bool, at path: DBusObjectPath) async {
    try? await connection?.setProperty(
      name, to: .boolean(on), interface: "org.bluez.Device1", at: path)
  }

  /// The device object bluetoothd makes on the peripheral for a central that connected from
  /// its public address (no advert heard: no RSSI, no advert data).
  private func peerDeviceInterface(_ path: DBusObjectPath, on adapter: Adapter) -> DBusInterface {
    DBusInterface(
      "org.bluez.Device1",
      methods: deviceMethods(path),
      properties: Self.deviceProperties(
        address: Self.deviceAddress(path), random: false, adapter: adapter.path, uuids: []))
  }

  /// `Connect` and `Disconnect` of a device object.
  func deviceMethods(_ path: DBusObjectPath) -> [DBusMethod] {
    [
      DBusMethod("Connect") { [weak self] _ in
        try await self?.connectDevice(path)
        return []
      },
      DBusMethod("Disconnect") { [weak self] _ in
        try await self?.disconnectDevice(path)
        return []
      },
    ]
  }

  // MARK: Remote databases

  /// Both ends discover the other's database (each end's remote objects mirror the apps on
  /// the other end's adapter), then `ServicesResolved` turns true.
  func resolveServices(_ id: Int) async {
    for side in GattLink.Side.allCases {
      guard gatt.links[id] != nil else { return }
      await mirror(id, side)
      gatt.links[id]?[side].servicesResolved = true
      guard let end = gatt.links[id]?[side] else { return }
      await setDeviceProperty("ServicesResolved", true, at: end.device)
    }
  }

  /// Exports (again) the remote objects of one end: below its device, `serviceXXXX` for each
  /// service of the apps on the other end's adapter and `serviceXXXX/charYYYY` for their
  /// characteristics, named by handle as bluetoothd's gatt-client names them (a service's
  /// declaration, then per characteristic its declaration and value handles and a CCC
  /// descriptor's when it notifies or indicates).
  func mirror(_ id: Int, _ side: GattLink.Side) async {
    guard let connection, let link = gatt.links[id] else { return }
    let end = link[side]
    for path in end.objects.reversed() { await connection.unexport(at: path) }
    var exports: [(DBusObjectPath, DBusInterface)] = []
    var characteristics: [DBusObjectPath: RemoteCharacteristic] = [:]
    var handle = Self.firstAppHandle
    let apps = (gatt.apps[link[side.other].adapter] ?? [:]).values.sorted {
      ($0.owner, $0.root.rawValue) < ($1.owner, $1.root.rawValue)
    }
    for app in apps {
      for service in app.services {
        guard let servicePath = try? end.device.appending("service" + Self.hex4(handle)) else {
          continue
        }
        handle += 1
        exports.append(
          (
            servicePath,
            DBusInterface(
              Self.gattServiceInterface,
              properties: [
                DBusProperty("UUID", .string(service.uuid)),
                DBusProperty("Device", .objectPath(end.device)),
                DBusProperty("Primary", .boolean(service.primary)),
                DBusProperty("Includes", .objectPaths([])),
              ])
          ))
        for characteristic in service.characteristics {
          guard let path = try? servicePath.appending("char" + Self.hex4(handle)) else { continue }
          let remote = RemoteCharacteristic(
            owner: app.owner, appPath: characteristic.path, appFlags: characteristic.flags)
          let notifies = remote.flags.contains("notify") || remote.flags.contains("indicate")
          handle += notifies ? 3 : 2
          characteristics[path] = remote
          exports.append(
            (
              path,
              remoteCharacteristicInterface(
                path, uuid: characteristic.uuid, service: servicePath, remote: remote,
                mtu: link.mtu)
            ))
        }
      }
    }
    gatt.links[id]?[side].objects = exports.map(\.0)
    gatt.links[id]?[side].characteristics = characteristics
    for (path, interface) in exports {
      guard gatt.links[id] != nil else { return }
      try? await connection.export(interface, at: path)
    }
  }

  private static func hex4(_ value: UInt16) -> String {
    let hex = String(value, radix: 16)
    return String(repeating: "0", count: max(0, 4 - hex.count)) + hex
  }

  private func remoteCharacteristicInterface(
    _ path: DBusObjectPath, uuid: String, service: DBusObjectPath, remote: RemoteCharacteristic,
    mtu: UInt16
  ) -> DBusInterface {
    let notifies = remote.flags.contains("notify") || remote.flags.contains("indicate")
    var properties = [
      DBusProperty("UUID", .string(uuid)),
      DBusProperty("Service", .objectPath(service)),
      DBusProperty("Value", .bytes([])),
      DBusProperty("Flags", .strings(remote.flags)),
      DBusProperty("MTU", .uint16(mtu)),
    ]
    if notifies { properties.append(DBusProperty("Notifying", .boolean(false))) }
    return DBusInterface(
      Self.gattCharacteristicInterface,
      methods: [
        DBusMethod("ReadValue", input: "a{sv}", output: "ay") { [weak self] call in
          guard let self else { return [.bytes([])] }
          return [
            .bytes(try await self.remoteRead(path, options: call.body[0].stringDictionary ?? [:]))
          ]
        },
        DBusMethod("WriteValue", input: "aya{sv}") { [weak self] call in
          try await self?.remoteWrite(
            path, value: call.body[0].bytes ?? [], options: call.body[1].stringDictionary ?? [:])
          return []
        },
        // Notifications are not emulated: the double answers as for a characteristic
        // that does not notify, naming the gap when it does.
        DBusMethod("StartNotify") { _ in
          throw DBusError(
            BlueZErrors.notSupported,
            notifies ? "notifications are not emulated by the double" : "Operation is not supported"
          )
        },
        DBusMethod("StopNotify") { _ in
          throw DBusError(BlueZErrors.notSupported, "Operation is not supported")
        },
      ], properties: properties)
  }

  /// The link, its side and the app characteristic behind the remote characteristic at
  /// `path`; `Failed` "Not connected" (gatt-client's answer with no ATT channel) when none.
  private func remoteCharacteristic(at path: DBusObjectPath) throws(DBusError)
    -> (link: GattLink, side: GattLink.Side, remote: RemoteCharacteristic)
  {
    for link in gatt.links.values {
      if let side = link.side(showing: path), let remote = link[side].characteristics[path] {
        return (link, side, remote)
      }
    }
    throw DBusError(BlueZErrors.failed, "Not connected")
  }

  // MARK: Reads and writes

  /// `ReadValue` on a remote characteristic: a read long, as bluetoothd's gatt-client does
  /// (src/shared/gatt-client.c `read_long_cb`): a Read Request (a Read Blob from the `offset`
  /// option when given), then Read Blobs while a response is full (MTU − 1 bytes) and fewer
  /// than 512 bytes were read. Each request is one `ReadValue` to the app with that offset;
  /// the app's answer is cut to 512 bytes (gatt-database), the response to MTU − 1, and the
  /// value the client assembles to 512 bytes.
  func remoteRead(_ path: DBusObjectPath, options: [String: DBusValue]) async throws -> [UInt8] {
    let (link, side, remote) = try remoteCharacteristic(at: path)
    guard !link.outOfSync else { throw ATTError.clientError(ATTError.databaseOutOfSync) }
    let full = Int(link.mtu) - 1
    var offset = Int(options["offset"]?.integer ?? 0)
    var value: [UInt8] = []
    while true {
      let answer = try await appRead(
        remote, device: link[side.other].device, mtu: link.mtu, offset: offset)
      guard gatt.links[link.id] != nil else { throw ATTError.clientError(0) }
      let response = answer.prefix(ATTError.maxValueLength).prefix(full)
      // The client keeps at most 512 bytes in all (`append_chunk`).
      let kept = response.prefix(max(0, ATTError.maxValueLength - offset))
      value += kept
      offset += kept.count
      if response.count < full || offset >= ATTError.maxValueLength { break }
    }
    try? await connection?.setProperty(
      "Value", to: .bytes(value), interface: Self.gattCharacteristicInterface, at: path)
    return value
  }

  /// `WriteValue` on a remote characteristic, chosen as bluetoothd's gatt-client chooses
  /// (src/gatt-client.c `characteristic_write_value`): "reliable-write" (or type "reliable")
  /// and values over MTU − 3 bytes (or with an offset) go as prepared writes then an execute;
  /// "write" (or type "request") as a Write Request; else "write-without-response" (or type
  /// "command") as a Write Command, refused over MTU − 3 bytes.
  func remoteWrite(_ path: DBusObjectPath, value: [UInt8], options: [String: DBusValue])
    async throws
  {
    let (link, side, remote) = try remoteCharacteristic(at: path)
    guard !link.outOfSync else { throw ATTError.clientError(ATTError.databaseOutOfSync) }
    let type = options["type"]?.string?.lowercased()
    let offset = Int(options["offset"]?.integer ?? 0)
    let flags = remote.flags
    let device = link[side.other].device
    let limit = Int(link.mtu) - 3
    if (type == nil && flags.contains("reliable-write")) || type == "reliable" {
      try await longWrite(remote, value, offset: offset, device: device, mtu: link.mtu)
      return
    }
    if (type == nil && flags.contains("write")) || type == "request" {
      if value.count <= limit && offset == 0 {
        // bluetoothd 5.66's server checks a Write Request's length with the 2-byte handle
        // counted (src/shared/gatt-server.c `write_cb`: `check_length(length, 0)`, fixed
        // later): a value of 511 or 512 bytes is refused with Invalid Attribute Value Length
        // before the app sees it (found in the VM, issue 30).
        guard value.count + 2 <= ATTError.maxValueLength else {
          throw ATTError.clientError(ATTError.invalidValueLength)
        }
        try await appWrite(remote, value, offset: 0, device: device, mtu: link.mtu)
      } else {
        try await longWrite(remote, value, offset: offset, device: device, mtu: link.mtu)
      }
      return
    }
    let supported = type == "command" || (type == nil && flags.contains("write-without-response"))
    guard supported, offset == 0, value.count <= limit else {
      throw type == "command" || type == "request" || type == "reliable"
        ? DBusError(BlueZErrors.failed, "Failed to initiate write")
        : DBusError(BlueZErrors.notSupported, "Operation is not supported")
    }
    // A Write Command has no response: the client's call is answered whatever the app does.
    _ = try? await appWrite(remote, value, offset: 0, device: device, mtu: link.mtu)
  }

  /// Prepared writes then an execute, as the server sees them (src/shared/gatt-server.c):
  /// each prepared part is checked against 512 bytes (offset over 512: Invalid Offset; past
  /// 512: Invalid Attribute Value Length) and queued, joined with the part before it when
  /// contiguous, without calling the app (no "authorize" flag); the execute then gives the
  /// app the whole value in one `WriteValue`, with `offset` when it does not start at 0.
  private func longWrite(
    _ remote: RemoteCharacteristic, _ value: [UInt8], offset: Int, device: DBusObjectPath,
    mtu: UInt16
  ) async throws {
    guard remote.writable else { throw ATTError.clientError(ATTError.writeNotPermitted) }
    if offset > ATTError.maxValueLength { throw ATTError.clientError(ATTError.invalidOffset) }
    if offset + value.count > ATTError.maxValueLength {
      throw ATTError.clientError(ATTError.invalidValueLength)
    }
    try await appWrite(remote, value, offset: offset, device: device, mtu: mtu)
  }

  /// One `ReadValue` to the app, with bluetoothd's options; its error translated to the
  /// client's.
  private func appRead(
    _ remote: RemoteCharacteristic, device: DBusObjectPath, mtu: UInt16, offset: Int
  ) async throws -> [UInt8] {
    guard remote.appFlags.contains(where: { $0.hasSuffix("read") }) else {
      throw ATTError.clientError(ATTError.readNotPermitted)
    }
    guard let connection else { throw ATTError.clientError(0) }
    gatt.reads += 1
    let reply: [DBusValue]
    do {
      reply = try await connection.call(
        destination: remote.owner, path: remote.appPath,
        interface: Self.gattCharacteristicInterface, member: "ReadValue",
        [.vardict(Self.appOptions(device: device, mtu: mtu, offset: offset))],
        timeout: Self.appTimeout)
    } catch {
      throw ATTError.clientError(ATTError.code(for: error, permission: ATTError.readNotPermitted))
    }
    guard reply.count == 1, let bytes = reply[0].bytes else {
      throw ATTError.clientError(ATTError.unlikely)
    }
    return bytes
  }

  /// One `WriteValue` to the app, with bluetoothd's options; over 512 bytes is refused first
  /// (Invalid Attribute Value Length). An app characteristic with "write-without-response"
  /// gets its writes without waiting for an answer and every write succeeds (bluetoothd
  /// queues no pending write for such a characteristic and answers the client at once).
  private func appWrite(
    _ remote: RemoteCharacteristic, _ value: [UInt8], offset: Int, device: DBusObjectPath,
    mtu: UInt16
  ) async throws {
    guard remote.writable else { throw ATTError.clientError(ATTError.writeNotPermitted) }
    guard value.count <= ATTError.maxValueLength else {
      throw ATTError.clientError(ATTError.invalidValueLength)
    }
    guard let connection else { throw ATTError.clientError(0) }
    gatt.writes += 1
    var call = DBusMessage.methodCall(
      destination: remote.owner, path: remote.appPath,
      interface: Self.gattCharacteristicInterface, member: "WriteValue",
      body: [.bytes(value), .vardict(Self.appOptions(device: device, mtu: mtu, offset: offset))])
    if remote.appFlags.contains("write-without-response") {
      call.noReplyExpected = true
      _ = try? connection.send(call)
      return
    }
    do {
      _ = try await connection.call(call, timeout: Self.appTimeout)
    } catch {
      throw ATTError.clientError(ATTError.code(for: error, permission: ATTError.writeNotPermitted))
    }
  }

  /// The options bluetoothd 5.66 gives an app's `ReadValue`/`WriteValue`
  /// (src/gatt-database.c `append_options`): `device` (the object of the remote device on the
  /// app's adapter), `offset` when not zero, `link` ("LE"), `mtu` (the link's ATT MTU). No
  /// `type` (later BlueZ versions add it).
  static func appOptions(device: DBusObjectPath, mtu: UInt16, offset: Int) -> [String: DBusValue] {
    var options: [String: DBusValue] = [
      "device": .objectPath(device), "link": .string("LE"), "mtu": .uint16(mtu),
    ]
    if offset != 0 { options["offset"] = .uint16(UInt16(clamping: offset)) }
    return options
  }

  // MARK: Control

  /// Sets the ATT MTU new links negotiate (23…517; 517 by default).
  func setGattMTU(_ mtu: UInt16) throws(DBusError) {
    guard (23...517).contains(mtu) else {
      throw DBusError(BlueZErrors.invalidArguments, "an ATT MTU is 23…517")
    }
    gatt.mtu = mtu
  }

  /// Links made, `ReadValue` and `WriteValue` calls made to apps, since the last reset.
  func gattStats() -> [DBusValue] {
    [.uint32(gatt.connects), .uint32(gatt.reads), .uint32(gatt.writes)]
  }

  /// Makes the links whose peripheral is `name` change-unaware (``GattLink/outOfSync``), as
  /// the real bluetoothd's server does to a hearer that missed a Service Changed indication;
  /// returns how many.
  func gattOutOfSync(_ name: String) -> UInt32 {
    var count: UInt32 = 0
    for id in gatt.links.keys where gatt.links[id]?.peripheral.adapter == name {
      gatt.links[id]?.outOfSync = true
      count += 1
    }
    return count
  }

  /// The roots of the apps registered on an adapter.
  func gattApps(_ name: String) -> [DBusObjectPath] {
    (gatt.apps[name] ?? [:]).keys.map(\.path).sorted()
  }

  /// The control methods of GATT (added to `org.nearby.BlueZDouble1`).
  func gattControlMethods() -> [DBusMethod] {
    let adapters = Set(self.adapters.keys)
    return [
      DBusMethod("SetGattMTU", input: "q") { [weak self] call in
        let mtu = try ControlArguments(call, adapters: adapters).uint16(0)
        try await self?.setGattMTU(mtu)
        return []
      },
      DBusMethod("GattStats", output: "uuu") { [weak self] _ in
        await self?.gattStats() ?? [.uint32(0), .uint32(0), .uint32(0)]
      },
      DBusMethod("GattOutOfSync", input: "s", output: "u") { [weak self] call in
        let adapter = try ControlArguments(call, adapters: adapters).adapter(0)
        return [.uint32(await self?.gattOutOfSync(adapter) ?? 0)]
      },
      DBusMethod("GattApps", input: "s", output: "ao") { [weak self] call in
        let adapter = try ControlArguments(call, adapters: adapters).adapter(0)
        return [.objectPaths(await self?.gattApps(adapter) ?? [])]
      },
    ]
  }
}
