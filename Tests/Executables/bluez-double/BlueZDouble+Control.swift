import DBus
import Foundation

/// The control interface tests steer the double through (`org.nearby.BlueZDouble1` at
/// `/org/nearby/BlueZDouble`), and the settings its methods change.
extension BlueZDouble {
  func controlInterface() -> DBusInterface {
    let adapters = Set(self.adapters.keys)
    return DBusInterface(
      Self.controlInterface,
      methods: [
        DBusMethod("Reset") { [weak self] _ in
          await self?.reset()
          return []
        },
        DBusMethod("SetPowered", input: "sb") { [weak self] call in
          let arguments = ControlArguments(call, adapters: adapters)
          await self?.poweredChanged(
            try arguments.adapter(0), try arguments.bool(1), fromPeer: false)
          return []
        },
        DBusMethod("SetAccessDenied", input: "b") { [weak self] call in
          await self?.setDenied(try ControlArguments(call, adapters: adapters).bool(0))
          return []
        },
        DBusMethod(
          "Restart", input: "u",
          handler: { call in
            _ = try ControlArguments(call, adapters: adapters).uint32(0)
            return []
          },
          afterReply: { [weak self] call in
            // Once the caller has its answer: the restart closes the connection this handler
            // runs on, so it runs in the double's own task, not in the handler's.
            guard case .uint32(let milliseconds) = call.body.first else { return }
            await self?.beginRestart(downFor: .milliseconds(Int(milliseconds)))
          }),
        DBusMethod("RemoveAdapter", input: "s") { [weak self] call in
          await self?.setPresent(try ControlArguments(call, adapters: adapters).adapter(0), false)
          return []
        },
        DBusMethod("AddAdapter", input: "s") { [weak self] call in
          await self?.setPresent(try ControlArguments(call, adapters: adapters).adapter(0), true)
          return []
        },
        DBusMethod("SetSupportedInstances", input: "sy") { [weak self] call in
          let arguments = ControlArguments(call, adapters: adapters)
          await self?.setInstances(try arguments.adapter(0), try arguments.byte(1))
          return []
        },
        DBusMethod("FailNext", input: "ssu") { [weak self] call in
          let arguments = ControlArguments(call, adapters: adapters)
          let member = try arguments.string(0)
          guard Self.failableMembers.contains(member) else {
            throw DBusError(
              .invalidArgs,
              "\(Self.controlInterface).FailNext: the double cannot fail \"\(member)\" (it can "
                + "fail \(Self.failableMembers.sorted().joined(separator: ", ")))")
          }
          await self?.failNext(member, try arguments.string(1), Int(try arguments.uint32(2)))
          return []
        },
        DBusMethod("RefuseMonitors", input: "su") { [weak self] call in
          let arguments = ControlArguments(call, adapters: adapters)
          await self?.setRefuseMonitors(try arguments.adapter(0), Int(try arguments.uint32(1)))
          return []
        },
        DBusMethod("SetMonitorSupport", input: "sb") { [weak self] call in
          let arguments = ControlArguments(call, adapters: adapters)
          await self?.setMonitorSupport(try arguments.adapter(0), try arguments.bool(1))
          return []
        },
        DBusMethod("Monitors", input: "s", output: "ao") { [weak self] call in
          let adapter = try ControlArguments(call, adapters: adapters).adapter(0)
          return [.objectPaths(await self?.monitorPaths(adapter) ?? [])]
        },
        DBusMethod("SetHeardOnce", input: "bu") { [weak self] call in
          let arguments = ControlArguments(call, adapters: adapters)
          await self?.setHeardOnce(
            try arguments.bool(0), gap: .milliseconds(Int(try arguments.uint32(1))))
          return []
        },
        DBusMethod("SetTemporaryTimeout", input: "u") { [weak self] call in
          await self?.setTemporaryTimeout(
            .milliseconds(Int(try ControlArguments(call, adapters: adapters).uint32(0))))
          return []
        },
        DBusMethod("SetRSSI", input: "sn") { [weak self] call in
          let arguments = ControlArguments(call, adapters: adapters)
          await self?.setRSSI(try arguments.adapter(0), Int(try arguments.int16(1)))
          return []
        },
        DBusMethod("MonitorPatterns", input: "s", output: "a(yyay)") { [weak self] call in
          let adapter = try ControlArguments(call, adapters: adapters).adapter(0)
          return [
            .array(
              .structure([.byte, .byte, .array(.byte)]),
              (await self?.monitorPatterns(adapter) ?? []).map {
                .structure([.byte($0.start), .byte($0.adType), .bytes($0.content)])
              })
          ]
        },
        DBusMethod("StallDiscovery", input: "s") { [weak self] call in
          await self?.stall(try ControlArguments(call, adapters: adapters).adapter(0))
          return []
        },
        DBusMethod("SetQuietMonitors", input: "b") { [weak self] call in
          await self?.setQuietMonitors(try ControlArguments(call, adapters: adapters).bool(0))
          return []
        },
        DBusMethod("SetReportInterval", input: "u") { [weak self] call in
          await self?.setInterval(
            .milliseconds(Int(try ControlArguments(call, adapters: adapters).uint32(0))))
          return []
        },
        DBusMethod("Adverts", input: "s", output: "aa{sv}") { [weak self] call in
          let adapter = try ControlArguments(call, adapters: adapters).adapter(0)
          return [
            .array(
              .dictionary(key: .string, value: .variant), await self?.advertList(adapter) ?? [])
          ]
        },
        DBusMethod("DiscoveryClients", input: "s", output: "as") { [weak self] call in
          let adapter = try ControlArguments(call, adapters: adapters).adapter(0)
          return [.strings(await self?.discoveryClients(adapter) ?? [])]
        },
      ] + gattControlMethods())
  }

  /// The BlueZ methods `FailNext` can fail (those that call ``scheduledFailure(_:)``).
  static let failableMembers: Set<String> = ["StartDiscovery", "RegisterAdvertisement"]

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

/// A control call's arguments, read by position. The registry has already refused a call whose
/// arguments do not match the method's declared input signature (InvalidArgs, naming the
/// member and both signatures) and a member the interface lacks (UnknownMethod), so these reads
/// cannot fail for a call that got here; they still throw, naming the command, instead of
/// putting a default value in place of an argument.
struct ControlArguments {
  let call: DBusMessage
  /// The double's adapters, which an argument naming one must be.
  let adapters: Set<String>

  init(_ call: DBusMessage, adapters: Set<String>) {
    self.call = call
    self.adapters = adapters
  }

  /// A string argument that names one of the double's adapters; any other name is refused
  /// (InvalidArgs), not ignored.
  func adapter(_ index: Int) throws(DBusError) -> String {
    let name = try string(index)
    guard adapters.contains(name) else {
      throw DBusError(
        .invalidArgs,
        "\(BlueZDouble.controlInterface).\(call.member ?? "?"): no adapter \"\(name)\" (the "
          + "double has \(adapters.sorted().joined(separator: ", ")))")
    }
    return name
  }

  func string(_ index: Int) throws(DBusError) -> String {
    guard case .string(let value) = try argument(index, "s") else { throw mismatch(index, "s") }
    return value
  }

  func bool(_ index: Int) throws(DBusError) -> Bool {
    guard case .boolean(let value) = try argument(index, "b") else { throw mismatch(index, "b") }
    return value
  }

  func byte(_ index: Int) throws(DBusError) -> UInt8 {
    guard case .byte(let value) = try argument(index, "y") else { throw mismatch(index, "y") }
    return value
  }

  func uint16(_ index: Int) throws(DBusError) -> UInt16 {
    guard case .uint16(let value) = try argument(index, "q") else { throw mismatch(index, "q") }
    return value
  }

  func int16(_ index: Int) throws(DBusError) -> Int16 {
    guard case .int16(let value) = try argument(index, "n") else { throw mismatch(index, "n") }
    return value
  }

  func uint32(_ index: Int) throws(DBusError) -> UInt32 {
    guard case .uint32(let value) = try argument(index, "u") else { throw mismatch(index, "u") }
    return value
  }

  private func argument(_ index: Int, _ expected: String) throws(DBusError) -> DBusValue {
    guard call.body.indices.contains(index) else { throw mismatch(index, expected) }
    return call.body[index]
  }

  private func mismatch(_ index: Int, _ expected: String) -> DBusError {
    DBusError(
      .invalidArgs,
      "\(BlueZDouble.controlInterface).\(call.member ?? "?") expects argument \(index) of type "
        + "\"\(expected)\", got arguments \"\(call.signature)\"")
  }
}
