import Core
import DBus
import Logging
import Strategy
import Tokens

/// Events from BlueZ: `Release` calls, bluetoothd leaving and coming back, and the property
/// changes of adapters and devices that become sightings.
extension BlueZEngine {
  func released(_ path: DBusObjectPath) async {
    guard advert?.path == path else { return }
    logger.debug("bluez \(name): BlueZ released our advert")
    advert = nil
    await connection.unexport(at: path)
    try? await Task.sleep(for: configuration.retryDelay)
    try? await applyAdvert(throwing: false)
  }

  /// BlueZ dropped our advert and our scan (bluetoothd left, the adapter powered off or went
  /// away): forget them, and unexport the advert object, which bluetoothd no longer uses (it
  /// would otherwise stay on the bus, one more at each power cycle, since the next
  /// registration uses a new path).
  func forgetBlueZSide() async {
    activeScan = nil
    guard let current = advert else { return }
    advert = nil
    await connection.unexport(at: current.path)
  }

  func ownerChanged(to owner: String) async {
    if owner.isEmpty {
      logger.info("bluez: bluetoothd left the bus")
      bluezPresent = false
      adapters = [:]
      devices = [:]
      presence.reset()
      await forgetBlueZSide()
      updateStatus()
    } else {
      logger.info("bluez: bluetoothd is back as \(owner)")
      accessDenied = false
      await loadObjects()
    }
  }

  func handle(_ signal: DBusMessage) async {
    guard let member = signal.member else { return }
    switch (signal.interface, member) {
    case ("org.freedesktop.DBus.Properties", "PropertiesChanged"):
      guard let path = signal.path, let body = try? signal.arguments("sa{sv}as"),
        let interface = body[0].string, let changed = body[1].stringDictionary
      else { return }
      switch interface {
      case "org.bluez.Device1":
        deviceChanged(path, changed, invalidated: body[2].elements?.compactMap(\.string) ?? [])
      case "org.bluez.Adapter1", "org.bluez.LEAdvertisingManager1":
        await adapterChanged(path, interface, changed)
      default: break
      }
    case ("org.freedesktop.DBus.ObjectManager", "InterfacesAdded"):
      guard let body = try? signal.arguments("oa{sa{sv}}"), let path = body[0].objectPath,
        let interfaces = DBusConnection.interfaceMap(body[1])
      else { return }
      if let properties = interfaces["org.bluez.Device1"] { deviceChanged(path, properties) }
      if interfaces["org.bluez.Adapter1"] != nil {
        adapters[path] = AdapterState(path: path, interfaces: interfaces)
        if chosen == nil { choose() }
        await reconcile()
      } else if var adapter = adapters[path] {
        // Interfaces added to a known adapter: update what they tell.
        let added = AdapterState(path: path, interfaces: interfaces)
        if interfaces["org.bluez.LEAdvertisingManager1"] != nil {
          adapter.hasAdvertising = true
          adapter.supportedInstances = added.supportedInstances
          adapter.activeInstances = added.activeInstances
        }
        if interfaces["org.bluez.AdvertisementMonitorManager1"] != nil {
          adapter.monitorTypes = added.monitorTypes
        }
        adapters[path] = adapter
        await reconcile()
      }
    case ("org.freedesktop.DBus.ObjectManager", "InterfacesRemoved"):
      guard let body = try? signal.arguments("oas"), let path = body[0].objectPath,
        let names = body[1].elements?.compactMap(\.string)
      else { return }
      if names.contains("org.bluez.Device1") { deviceRemoved(path) }
      if names.contains("org.bluez.AdvertisementMonitorManager1") {
        adapters[path]?.monitorTypes = []
      }
      if names.contains("org.bluez.LEAdvertisingManager1") {
        adapters[path]?.hasAdvertising = false
      }
      if names.contains("org.bluez.Adapter1") {
        adapters[path] = nil
        if chosen == path {
          logger.info("bluez: adapter \(path) went away")
          await forgetBlueZSide()
          choose()
        }
        await reconcile()
      }
    default:
      break
    }
  }

  func adapterChanged(
    _ path: DBusObjectPath, _ interface: String, _ changed: [String: DBusValue]
  ) async {
    guard var adapter = adapters[path] else { return }
    if interface == "org.bluez.Adapter1", let powered = changed["Powered"]?.bool,
      powered != adapter.powered
    {
      adapter.powered = powered
      adapters[path] = adapter
      if path == chosen {
        logger.info("bluez \(adapter.name): powered \(powered ? "on" : "off")")
        if !powered { await forgetBlueZSide() }
        await reconcile()
      } else if chosen == nil || adapters[chosen!]?.powered != true, configuration.adapter == nil {
        choose()
        await reconcile()
      }
    } else if interface == "org.bluez.LEAdvertisingManager1" {
      if let supported = changed["SupportedInstances"]?.integer {
        adapter.supportedInstances = Int(supported)
      }
      if let active = changed["ActiveInstances"]?.integer { adapter.activeInstances = Int(active) }
      adapters[path] = adapter
      noteSharedAdvertising()
    }
  }

  /// A device's properties changed: remember them (and forget the `invalidated` ones), and
  /// when they carry an advertising report, report a sighting of its token frame (never our
  /// own token) while scanning for tokens, and a beacon sighting of each beacon frame while
  /// scanning for beacons. bluetoothd sends only the properties whose value changed, so an
  /// advert that repeats itself unchanged sends nothing: ``presenceTick()`` re-reports those.
  func deviceChanged(
    _ path: DBusObjectPath, _ changed: [String: DBusValue], invalidated: [String] = []
  ) {
    var device = devices[path] ?? DeviceState()
    presence.deviceChanged(path)
    device.invalidate(invalidated)
    let report = device.apply(changed, at: .now)
    devices[path] = device
    guard report, isOnChosenAdapter(device, path) else { return }
    scanPlan.life(at: .now)
    guard activeScan != nil else { return }
    if wantBeacons != nil { reportBeacons(device, path) }
    guard wantScanning else { return }
    if configuration.reportsAllAdvertisements {
      advertisements.yield(
        BlueZAdvertisement(
          address: device.address ?? path.rawValue, rssi: device.rssi.map(Int.init),
          txPower: device.txPower.map(Int.init), serviceData: device.serviceData,
          manufacturerData: device.manufacturerData, token: device.frame?.token))
    }
    reportToken(device)
  }

  /// Whether the device was heard by the adapter the medium uses.
  func isOnChosenAdapter(_ device: DeviceState, _ path: DBusObjectPath) -> Bool {
    device.isOn(adapter: chosen, at: path)
  }

  /// A sighting of the device's token frame, unless it has none or it is our own token.
  func reportToken(_ device: DeviceState) {
    guard let frame = device.frame, frame.token != advert?.token, frame.token != wantedToken
    else { return }
    sightings.yield(
      Sighting(
        token: frame.token, medium: .ble, rssi: device.rssi.map(Double.init),
        txPower: Int(frame.txPower),
        returnPath: device.address.flatMap {
          BLEPeerAddress.make(role: .advertiser, address: $0, isRandom: device.randomAddress)
        }))
  }

  /// One beacon sighting for each beacon frame of the device's last data; malformed frames
  /// are skipped (logged at debug).
  func reportBeacons(_ device: DeviceState, _ path: DBusObjectPath) {
    let address = device.address ?? path.rawValue
    let frames = device.beaconFrames { entry, error in
      logger.debug("bluez \(name): \(address) sent a malformed beacon in \(entry): \(error)")
    }
    let now = ContinuousClock.now
    for frame in frames {
      beaconSightings.yield(
        BeaconSighting(address: address, frame: frame, rssi: device.rssi.map(Int.init), time: now))
    }
  }
}
