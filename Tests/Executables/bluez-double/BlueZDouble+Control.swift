import DBus
import Foundation

/// The control interface tests steer the double through (`org.nearby.BlueZDouble1` at
/// `/org/nearby/BlueZDouble`), and the settings its methods change.
extension BlueZDouble {
  func controlInterface() -> DBusInterface {
    DBusInterface(
      Self.controlInterface,
      methods: [
        DBusMethod("Reset") { [weak self] _ in
          await self?.reset()
          return []
        },
        DBusMethod("SetPowered", input: "sb") { [weak self] call in
          await self?.poweredChanged(
            call.body[0].string ?? "", call.body[1].bool ?? false, fromPeer: false)
          return []
        },
        DBusMethod("SetAccessDenied", input: "b") { [weak self] call in
          await self?.setDenied(call.body[0].bool ?? false)
          return []
        },
        DBusMethod("Restart", input: "u") { [weak self] call in
          let milliseconds = Int(call.body[0].integer ?? 200)
          Task { [weak self] in
            try? await Task.sleep(for: .milliseconds(20))
            try? await self?.restart(downFor: .milliseconds(milliseconds))
          }
          return []
        },
        DBusMethod("RemoveAdapter", input: "s") { [weak self] call in
          await self?.setPresent(call.body[0].string ?? "", false)
          return []
        },
        DBusMethod("AddAdapter", input: "s") { [weak self] call in
          await self?.setPresent(call.body[0].string ?? "", true)
          return []
        },
        DBusMethod("SetSupportedInstances", input: "sy") { [weak self] call in
          guard case .byte(let count) = call.body[1] else { return [] }
          await self?.setInstances(call.body[0].string ?? "", count)
          return []
        },
        DBusMethod("FailNext", input: "ssu") { [weak self] call in
          await self?.failNext(
            call.body[0].string ?? "", call.body[1].string ?? "", Int(call.body[2].integer ?? 1))
          return []
        },
        DBusMethod("RefuseMonitors", input: "su") { [weak self] call in
          await self?.setRefuseMonitors(
            call.body[0].string ?? "", Int(call.body[1].integer ?? 0))
          return []
        },
        DBusMethod("SetMonitorSupport", input: "sb") { [weak self] call in
          await self?.setMonitorSupport(call.body[0].string ?? "", call.body[1].bool ?? false)
          return []
        },
        DBusMethod("Monitors", input: "s", output: "ao") { [weak self] call in
          [.objectPaths(await self?.monitorPaths(call.body[0].string ?? "") ?? [])]
        },
        DBusMethod("SetHeardOnce", input: "bu") { [weak self] call in
          await self?.setHeardOnce(
            call.body[0].bool ?? false, gap: .milliseconds(Int(call.body[1].integer ?? 0)))
          return []
        },
        DBusMethod("SetTemporaryTimeout", input: "u") { [weak self] call in
          await self?.setTemporaryTimeout(.milliseconds(Int(call.body[0].integer ?? 0)))
          return []
        },
        DBusMethod("SetRSSI", input: "sn") { [weak self] call in
          await self?.setRSSI(call.body[0].string ?? "", Int(call.body[1].integer ?? 0))
          return []
        },
        DBusMethod("MonitorPatterns", input: "s", output: "a(yyay)") { [weak self] call in
          [
            .array(
              .structure([.byte, .byte, .array(.byte)]),
              (await self?.monitorPatterns(call.body[0].string ?? "") ?? []).map {
                .structure([.byte($0.start), .byte($0.adType), .bytes($0.content)])
              })
          ]
        },
        DBusMethod("StallDiscovery", input: "s") { [weak self] call in
          await self?.stall(call.body[0].string ?? "")
          return []
        },
        DBusMethod("SetQuietMonitors", input: "b") { [weak self] call in
          await self?.setQuietMonitors(call.body[0].bool ?? false)
          return []
        },
        DBusMethod("SetReportInterval", input: "u") { [weak self] call in
          await self?.setInterval(.milliseconds(Int(call.body[0].integer ?? 100)))
          return []
        },
        DBusMethod("Adverts", input: "s", output: "aa{sv}") { [weak self] call in
          [
            .array(
              .dictionary(key: .string, value: .variant),
              await self?.advertList(call.body[0].string ?? "") ?? [])
          ]
        },
        DBusMethod("DiscoveryClients", input: "s", output: "as") { [weak self] call in
          [.strings(await self?.discoveryClients(call.body[0].string ?? "") ?? [])]
        },
      ] + gattControlMethods())
  }

  func setDenied(_ on: Bool) { denied.value = on }
  func setQuietMonitors(_ on: Bool) { quietMonitors = on }
  func failNext(_ member: String, _ name: String, _ count: Int) {
    failures[member] = (name, count)
  }
  func stall(_ adapter: String) { stalled.insert(adapter) }

  /// Sets the base RSSI of every device heard from `advertiser`'s adverts (the jitter stays);
  /// 127 is HCI's "RSSI not available", sent as it is, without jitter, as btvirt's emulated
  /// controllers do for every report (item 8); 0 or any other value outside −127…−1 dBm goes
  /// back to the distance formula.
  func setRSSI(_ advertiser: String, _ rssi: Int) {
    rssiOverrides[advertiser] = (-127 ... -1).contains(rssi) || rssi == 127 ? Int16(rssi) : nil
  }

  /// Sets how long a device may go unheard before it is removed (bluetoothd's
  /// `TemporaryTimeout`, 30 s by default); zero, the double's default, removes it with its
  /// advert or at the first report it misses.
  func setTemporaryTimeout(_ timeout: Duration) { temporaryTimeout = timeout }

  /// Turns the VM's emulated air on or off (see ``heardOnceGap``): with it, a device is heard
  /// only when created, removed ``temporaryTimeout`` later, and back `gap` after that.
  func setHeardOnce(_ on: Bool, gap: Duration) {
    heardOnceGap = on ? gap : nil
    returning = [:]
  }

  /// Adds or removes AdvertisementMonitorManager1 on an adapter (re-exports the adapter).
  func setRefuseMonitors(_ name: String, _ count: Int) {
    adapters[name]?.refuseMonitors = count
  }

  func setMonitorSupport(_ name: String, _ on: Bool) async {
    guard let adapter = adapters[name], adapter.monitorSupport != on else { return }
    adapters[name]?.monitorSupport = on
    guard adapter.present else { return }
    if on {
      try? await exportMonitorManager(name)
    } else {
      adapters[name]?.monitors = [:]
      adapters[name]?.monitorApps = []
      await connection?.unexport(
        interfaces: ["org.bluez.AdvertisementMonitorManager1"], at: adapter.path)
    }
  }

  func monitorPaths(_ name: String) -> [DBusObjectPath] {
    adapters[name].map { $0.monitors.keys.map(\.path).sorted() } ?? []
  }
  /// Every pattern of the monitors registered on an adapter, in a stable order.
  func monitorPatterns(_ name: String) -> [MonitorPattern] {
    adapters[name]?.monitors.sorted { $0.key.path < $1.key.path }.flatMap(\.value) ?? []
  }
  func setInterval(_ interval: Duration) { reportInterval = interval }

  func setInstances(_ name: String, _ count: UInt8) async {
    guard let adapter = adapters[name] else { return }
    adapters[name]?.supportedInstances = count
    try? await connection?.setProperty(
      "SupportedInstances", to: .byte(count), interface: "org.bluez.LEAdvertisingManager1",
      at: adapter.path)
  }

  func setPresent(_ name: String, _ present: Bool) async {
    guard let adapter = adapters[name], adapter.present != present else { return }
    adapters[name]?.present = present
    if present {
      try? await publish(name)
    } else {
      await dropLinks(of: name)
      // bluetoothd, when a controller goes away (btvirt stopped, in the BlueZ VM): Powered
      // false and Discovering false in one PropertiesChanged (PowerState left "on"), then
      // InterfacesRemoved of the adapter (docs/bluez-vm-findings.md item 23).
      try? await connection?.setProperty(
        "Powered", to: .boolean(false), interface: "org.bluez.Adapter1", at: adapter.path)
      for (key, _) in adapter.adverts { await release(key, on: name) }
      adapters[name]?.adverts = [:]
      adapters[name]?.discovery = [:]
      for (path, device) in devices where device.hearing == name {
        devices[path] = nil
        await connection?.unexport(at: path)
      }
      await connection?.unexport(at: adapter.path)
    }
    await syncAir()
  }

  func advertList(_ name: String) -> [DBusValue] {
    (adapters[name]?.adverts.values.map { advert in
      DBusValue.vardict([
        "Owner": .string(advert.owner), "Path": .objectPath(advert.path),
        "Type": .string(advert.type),
        "ServiceData": .vardict(advert.serviceData.mapValues { .bytes($0) }),
        "Length": .uint32(UInt32(advert.payloadLength)),
      ])
    }) ?? []
  }

  func discoveryClients(_ name: String) -> [String] {
    adapters[name].map { Array($0.discovery.keys).sorted() } ?? []
  }
}
