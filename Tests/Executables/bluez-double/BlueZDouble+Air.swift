import DBus
import Foundation

/// The simulated air: device objects kept in step with the adverts (``syncAir()``), the
/// periodic advertising reports and the monitors told of them, unheard devices expiring.
extension BlueZDouble {
  /// Makes the device objects match the adverts: every advert on a powered adapter appears
  /// on every other powered adapter that is discovering (or whose monitor matches it) and not
  /// stalled. A device whose advert stopped, or whose adapter no longer hears it, stays until
  /// it has gone unheard for ``temporaryTimeout`` (see ``expireUnheard(now:)``); with the default
  /// zero, a device whose advert stopped goes at once. Devices of an adapter that is off or
  /// gone go at once.
  func syncAir() async {
    guard let connection else { return }
    var wanted: [DBusObjectPath: Device] = [:]
    for advertiser in adapters.values where advertiser.present && advertiser.powered {
      // Ordered by slot: two connectable adverts of an adapter share its address, hence one
      // device object, which stands for the older one.
      for key in advertiser.adverts.keys.sorted(by: { advertSlots[$0]! < advertSlots[$1]! }) {
        for hearer in adapters.values
        where hearer.name != advertiser.name && hearer.present && hearer.powered {
          let path = devicePath(key, advertiser: advertiser, hearer: hearer)
          if let existing = devices[path], existing.advert == key {
            wanted[path] = existing
          } else if wanted[path] == nil, !stalled.contains(hearer.name),
            !hearer.discovery.isEmpty || hearer.monitorMatches(advertiser.adverts[key]!),
            returning[path].map({ $0 <= .now }) ?? true
          {
            wanted[path] = Device(
              path: path, hearing: hearer.name, advertiser: advertiser.name, advert: key,
              rssi: Int16(-45 - 6 * abs(advertiser.index - hearer.index)))
          }
        }
      }
    }
    let linked = gatt.linkedDevices
    for (path, device) in devices where wanted[path]?.advert != device.advert {
      // bluetoothd keeps a connected device, whatever its advert does.
      if linked.contains(path) {
        if let replacement = wanted[path] {
          devices[path]?.advert = replacement.advert
          devices[path]?.advertiser = replacement.advertiser
        }
        continue
      }
      let hearer = adapters[device.hearing]
      let lingers =
        temporaryTimeout > .zero && wanted[path] == nil && hearer?.present == true
        && hearer?.powered == true
      guard !lingers else { continue }
      devices[path] = nil
      await connection.unexport(at: path)
      tellMonitors("DeviceLost", device, path)
    }
    for (path, var device) in wanted where devices[path] == nil {
      returning[path] = nil
      if let advert = advert(of: device) {
        device.told = reportProperties(device, advert, rssi: currentRSSI(device))
      }
      devices[path] = device
      // A device the double made for a link's central is that device already.
      if !gatt.peerDevices.contains(path) {
        try? await connection.export(deviceInterface(device), at: path)
      }
      tellMonitors("DeviceFound", device, path)
    }
  }

  /// The object path of the device `hearer` sees for an advert of `advertiser`.
  func devicePath(_ key: AdvertKey, advertiser: Adapter, hearer: Adapter)
    -> DBusObjectPath
  {
    // A connectable advert goes out from the adapter's public address (see `register`), a
    // non-connectable one from a random address of its own.
    let slot = advertSlots[key] ?? 0
    let address =
      advertiser.adverts[key]?.type == "peripheral"
      ? advertiser.address
      : String(format: "C0:DE:%02X:%02X:%02X:01", advertiser.index, slot >> 8, slot & 0xff)
    return try! DBusObjectPath(
      "\(hearer.path.rawValue)/dev_\(address.replacingOccurrences(of: ":", with: "_"))")
  }

  /// Removes the devices unheard for longer than ``temporaryTimeout``, as bluetoothd's
  /// temporary-device timer does (InterfacesRemoved; monitors get DeviceLost).
  func expireUnheard(now: ContinuousClock.Instant) async {
    guard let connection else { return }
    let linked = gatt.linkedDevices
    for (path, device) in devices
    where now - device.lastHeard > temporaryTimeout && !linked.contains(path) {
      devices[path] = nil
      await connection.unexport(at: path)
      tellMonitors("DeviceLost", device, path)
      if let heardOnceGap { returning[path] = now + heardOnceGap }
    }
    guard returning.values.contains(where: { $0 <= now }) else { return }
    await syncAir()
    returning = returning.filter { $0.value > now }
  }

  /// Calls DeviceFound or DeviceLost on the monitors of the hearing adapter that match the
  /// device's advert, as bluetoothd does: never DeviceLost on a monitor without RSSI
  /// settings; `perReportOnly` (a repeated report) calls only those; `only` limits the
  /// monitors to some.
  func tellMonitors(
    _ member: String, _ device: Device, _ path: DBusObjectPath, perReportOnly: Bool = false,
    only: Set<AdvertKey>? = nil
  ) {
    guard let connection, let hearer = adapters[device.hearing], let heard = advert(of: device)
    else { return }
    for monitor in hearer.matchingMonitors(heard) {
      let perReport = hearer.perReportMonitors.contains(monitor)
      if perReportOnly && !perReport { continue }
      if member == "DeviceLost" && perReport { continue }
      if let only, !only.contains(monitor) { continue }
      var call = DBusMessage.methodCall(
        destination: monitor.owner, path: monitor.path,
        interface: "org.bluez.AdvertisementMonitor1", member: member, body: [.objectPath(path)])
      call.noReplyExpected = true
      _ = try? connection.send(call)
    }
  }

  func advert(of device: Device) -> RegisteredAdvert? {
    adapters[device.advertiser]?.adverts[device.advert]
  }

  /// The address a device object's path names (`…/dev_AA_BB_…` → `AA:BB:…`).
  static func deviceAddress(_ path: DBusObjectPath) -> String {
    path.rawValue.split(separator: "/").last!.dropFirst(4).replacingOccurrences(of: "_", with: ":")
  }

  /// The Device1 properties every device object starts with, as bluetoothd makes them: not
  /// paired, bonded, trusted, blocked or connected.
  static func deviceProperties(
    address: String, random: Bool, adapter: DBusObjectPath, uuids: [String]
  ) -> [DBusProperty] {
    [
      DBusProperty("Address", .string(address)),
      DBusProperty("AddressType", .string(random ? "random" : "public")),
      DBusProperty("Alias", .string(address.replacingOccurrences(of: ":", with: "-"))),
      DBusProperty("Adapter", .objectPath(adapter)),
      DBusProperty("Paired", .boolean(false)),
      DBusProperty("Bonded", .boolean(false)),
      DBusProperty("Trusted", .boolean(false), access: .readWrite),
      DBusProperty("Blocked", .boolean(false), access: .readWrite),
      DBusProperty("LegacyPairing", .boolean(false)),
      DBusProperty("Connected", .boolean(false)),
      DBusProperty("ServicesResolved", .boolean(false)),
      DBusProperty("UUIDs", .strings(uuids)),
    ]
  }

  func deviceInterface(_ device: Device) -> DBusInterface {
    let advert = advert(of: device)
    let address = Self.deviceAddress(device.path)
    var properties =
      Self.deviceProperties(
        address: address, random: address.hasPrefix("C0:DE:"),
        adapter: adapters[device.hearing]!.path, uuids: advert?.serviceUUIDs ?? [])
      + [
        DBusProperty("RSSI", device.told["RSSI"] ?? .int16(device.rssi), emitsChanged: false),
        DBusProperty("ServiceData", serviceData(advert), emitsChanged: false),
        DBusProperty("ManufacturerData", manufacturerData(advert), emitsChanged: false),
      ]
    if let advert {
      // Real bluetoothd's Device1 carries the advert's AD flags (item 9: `04`, "BR/EDR not
      // supported", for btmgmt's non-connectable advert); a peripheral advert is also "LE
      // general discoverable".
      properties.append(
        DBusProperty("AdvertisingFlags", .bytes([advert.type == "peripheral" ? 0x06 : 0x04])))
    }
    if let name = advert?.localName { properties.append(DBusProperty("Name", .string(name))) }
    if let txPower = advert?.txPower, advert?.includesTxPower == true {
      properties.append(DBusProperty("TxPower", .int16(txPower)))
    }
    return DBusInterface(
      "org.bluez.Device1", methods: deviceMethods(device.path), properties: properties)
  }

  /// Service data keyed as bluetoothd reports it: full 128-bit UUIDs.
  func serviceData(_ advert: RegisteredAdvert?) -> DBusValue {
    .vardict(
      Dictionary(
        (advert?.serviceData ?? [:]).map { (fullUUID($0.key), DBusValue.bytes($0.value)) },
        uniquingKeysWith: { first, _ in first }))
  }

  func manufacturerData(_ advert: RegisteredAdvert?) -> DBusValue {
    .dictionary(
      key: .uint16, value: .variant,
      (advert?.manufacturerData ?? [:]).sorted { $0.key < $1.key }.map {
        DBusDictEntry(.uint16($0.key), .variant(.bytes($0.value)))
      })
  }

  /// One advertising report per device its adapter hears (discovering, or a matching monitor;
  /// not stalled): the device counts as heard now, and `PropertiesChanged` carries the
  /// report's properties whose value changed since they were last told, and more when a
  /// discovery filter asks for it, as real bluetoothd 5.66 does (docs/bluez-vm-findings.md
  /// item 10 and its correction, seen with btmon): while any client of the adapter discovers
  /// with a filter set, the RSSI on every report (its delta threshold is then 0), and with
  /// `DuplicateData` true the service and manufacturer data too, changed or not. Without a
  /// filter (or under a monitor alone) a device at a constant RSSI (127, `SetRSSI`) whose data
  /// is unchanged sends nothing; the jittered RSSI alone otherwise. `SetHeardOnce` (the VM's
  /// kernel passing on one report per device object) is how tests get a silent device under
  /// our medium's filtered discovery. Under `SetQuietMonitors`, a device heard only through a
  /// monitor sends nothing. Then the devices unheard for ``temporaryTimeout`` go.
  func report() async {
    guard let connection else { return }
    let now = ContinuousClock.now
    for (path, device) in devices {
      guard let hearer = adapters[device.hearing], hearer.powered,
        let advert = advert(of: device),
        !hearer.discovery.isEmpty || hearer.monitorMatches(advert),
        !stalled.contains(hearer.name)
      else { continue }
      guard heardOnceGap == nil else { continue }
      devices[path]?.lastHeard = now
      // bluetoothd calls DeviceFound for every report on a monitor without RSSI settings.
      tellMonitors("DeviceFound", device, path, perReportOnly: true)
      guard !hearer.discovery.isEmpty || !quietMonitors else { continue }
      let properties = reportProperties(device, advert, rssi: currentRSSI(device))
      let filters = hearer.discovery.values
      let resendRSSI = filters.contains { !$0.isEmpty }
      let resendData = filters.contains { $0["DuplicateData"]?.bool == true }
      let changed = properties.filter { key, value in
        device.told[key] != value || (key == "RSSI" ? resendRSSI : resendData)
      }
      guard !changed.isEmpty else { continue }
      devices[path]?.told = properties
      if let rssi = changed["RSSI"] {
        try? await connection.setProperty(
          "RSSI", to: rssi, interface: "org.bluez.Device1", at: path)
      }
      try? connection.emit(
        .signal(
          path: path, interface: "org.freedesktop.DBus.Properties", member: "PropertiesChanged",
          body: [.string("org.bluez.Device1"), .vardict(changed), .strings([])]))
    }
    await expireUnheard(now: now)
  }

  /// The RSSI of the device's next report: `SetRSSI`'s value or the distance formula's, with a
  /// jitter of ±2 dB; 127 ("not available", what btvirt's controllers always send) as it is.
  func currentRSSI(_ device: Device) -> Int16 {
    let base = rssiOverrides[device.advertiser] ?? device.rssi
    return base == 127 ? 127 : base + Int16.random(in: -2...2)
  }

  /// The properties an advertising report sets: RSSI, and the advert's service and
  /// manufacturer data when it has any.
  func reportProperties(_ device: Device, _ advert: RegisteredAdvert, rssi: Int16)
    -> [String: DBusValue]
  {
    var properties: [String: DBusValue] = ["RSSI": .int16(rssi)]
    if !advert.serviceData.isEmpty { properties["ServiceData"] = serviceData(advert) }
    if !advert.manufacturerData.isEmpty {
      properties["ManufacturerData"] = manufacturerData(advert)
    }
    return properties
  }
}
