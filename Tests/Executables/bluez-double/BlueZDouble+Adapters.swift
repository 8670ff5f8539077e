import DBus
import Foundation

/// Adapters and their power: publishing an adapter as bluetoothd does, its `Adapter1` and
/// `LEAdvertisingManager1` objects, power changes and the counts they show.
extension BlueZDouble {
  /// Publishes an adapter as bluetoothd 5.66 does when it starts or a controller appears
  /// (seen in the BlueZ VM: bluetoothd restarted, btvirt restarted;
  /// docs/bluez-vm-findings.md item 23): `InterfacesAdded` says `Powered` false (`PowerState`
  /// "off-enabling"), then `AutoEnable` powers it on, a `PropertiesChanged` later.
  func publish(_ name: String) async throws {
    guard let wanted = adapters[name]?.powered else { return }
    adapters[name]?.powered = false
    try await exportAdapter(name)
    guard wanted else { return }
    try await Task.sleep(for: Self.publishDelay)
    await poweredChanged(name, true, fromPeer: false)
  }

  func exportAdapter(_ name: String) async throws {
    guard let connection, let adapter = adapters[name] else { return }
    let properties: [DBusProperty] = [
      DBusProperty("Address", .string(adapter.address)),
      DBusProperty("AddressType", .string("public")),
      DBusProperty("Name", .string("double-\(name)")),
      DBusProperty("Alias", .string("double-\(name)"), access: .readWrite),
      DBusProperty("Class", .uint32(0)),
      DBusProperty(
        "Powered", .boolean(adapter.powered), access: .readWrite,
        validator: { [weak self] value in
          let on = value.bool ?? false
          Task { await self?.poweredChanged(name, on, fromPeer: true) }
        }),
      // bluetoothd 5.66 also has PowerState (item 2): "on"/"off" here, never the transitional
      // "off-enabling"/"on-disabling" (the double powers at once).
      DBusProperty("PowerState", .string(adapter.powered ? "on" : "off")),
      DBusProperty("Discoverable", .boolean(false), access: .readWrite),
      DBusProperty("Pairable", .boolean(false), access: .readWrite),
      DBusProperty("Discovering", .boolean(false)),
      DBusProperty("UUIDs", .strings([])),
      DBusProperty("Modalias", .string("usb:v1D6Bp0246d0541")),
      DBusProperty("Roles", .strings(["central", "peripheral"])),
    ]
    try await connection.export(
      DBusInterface(
        "org.bluez.Adapter1",
        methods: [
          DBusMethod("StartDiscovery") { [weak self] call in
            try await self?.startDiscovery(name, client: call.sender ?? "")
            return []
          },
          DBusMethod("StopDiscovery") { [weak self] call in
            try await self?.stopDiscovery(name, client: call.sender ?? "")
            return []
          },
          DBusMethod("SetDiscoveryFilter", input: "a{sv}") { [weak self] call in
            try await self?.setFilter(name, client: call.sender ?? "", call.body[0])
            return []
          },
          DBusMethod("GetDiscoveryFilters", output: "as") { _ in
            [.strings(Self.discoveryFilters)]
          },
          DBusMethod("RemoveDevice", input: "o") { [weak self] call in
            guard let path = call.body[0].objectPath else { return [] }
            try await self?.removeDevice(path)
            return []
          },
        ], properties: properties), at: adapter.path)
    try await connection.export(
      DBusInterface(
        "org.bluez.LEAdvertisingManager1",
        methods: [
          DBusMethod("RegisterAdvertisement", input: "oa{sv}") { [weak self] call in
            guard let self, let path = call.body[0].objectPath else { return [] }
            try await self.register(name, owner: call.sender ?? "", path: path)
            return []
          },
          DBusMethod("UnregisterAdvertisement", input: "o") { [weak self] call in
            guard let self, let path = call.body[0].objectPath else { return [] }
            try await self.unregister(name, owner: call.sender ?? "", path: path)
            return []
          },
        ],
        properties: [
          DBusProperty("ActiveInstances", .byte(0)),
          DBusProperty("SupportedInstances", .byte(adapter.supportedInstances)),
          DBusProperty("SupportedIncludes", .strings(["tx-power", "appearance", "local-name"])),
          // As bluetoothd 5.66 over a legacy-advertising controller (item 4): the lengths it
          // allows, no optional features, and no SupportedSecondaryChannels at all (declared,
          // but absent from GetAll/GetManagedObjects when the list is empty).
          DBusProperty(
            "SupportedCapabilities",
            .vardict(["MaxAdvLen": .byte(31), "MaxScnRspLen": .byte(31)])),
          DBusProperty("SupportedFeatures", .strings([])),
        ]), at: adapter.path)
    try await exportGattManager(name)
    if adapter.monitorSupport { try await exportMonitorManager(name) }
  }

  /// Leaves a method call unanswered, as bluetoothd does in the cases of item 15: the caller's
  /// timeout ends it. The handler holds on until its task is cancelled (the connection ends:
  /// a restart, or the double stops), then throws.
  static func neverAnswer() async throws -> Never {
    let (never, end) = AsyncStream.makeStream(of: Never.self)
    // An AsyncStream's iteration ends when its task is cancelled; nothing else ends this one.
    for await _ in never {}
    end.finish()
    throw CancellationError()
  }

  func adapter(_ name: String) throws(DBusError) -> Adapter {
    guard let adapter = adapters[name], adapter.present else {
      throw DBusError(.unknownObject, "no adapter \(name)")
    }
    return adapter
  }

  func poweredChanged(_ name: String, _ on: Bool, fromPeer: Bool) async {
    guard var adapter = adapters[name], adapter.present else { return }
    let was = adapter.powered
    adapter.powered = on
    adapters[name] = adapter
    if !fromPeer {
      try? await connection?.setProperty(
        "Powered", to: .boolean(on), interface: "org.bluez.Adapter1", at: adapter.path)
    }
    try? await connection?.setProperty(
      "PowerState", to: .string(on ? "on" : "off"), interface: "org.bluez.Adapter1",
      at: adapter.path)
    guard was != on else { return }
    if !on {
      // Its LE links go down (both ends see the disconnection).
      await dropLinks(of: name)
      // bluetoothd releases adverts and ends discovery when the adapter powers off.
      for (key, _) in adapter.adverts { await release(key, on: name) }
      adapters[name]?.adverts = [:]
      adapters[name]?.discovery = [:]
      await updateCounts(name)
    }
    await syncAir()
  }

  func updateCounts(_ name: String) async {
    guard let adapter = adapters[name], let connection else { return }
    try? await connection.setProperty(
      "Discovering", to: .boolean(!adapter.discovery.isEmpty), interface: "org.bluez.Adapter1",
      at: adapter.path)
    try? await connection.setProperty(
      "ActiveInstances", to: .byte(UInt8(adapter.adverts.count)),
      interface: "org.bluez.LEAdvertisingManager1", at: adapter.path)
  }
}
