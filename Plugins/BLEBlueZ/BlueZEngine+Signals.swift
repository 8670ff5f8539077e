import Core
import DBus
import Logging
import Strategy
import Tokens

/// Events from BlueZ: `Release` calls, bluetoothd leaving and coming back, and the property
/// changes of adapters and devices that become sightings.
///
/// Where they are handled: the D-Bus connection's dispatch thread hands every BlueZ signal to
/// ``reporter`` (``DeviceReporter/receive(_:)``), which handles a device's (a report becomes a
/// sighting there, from the device cache it keeps behind its lock: one task wake-up and one
/// actor hop fewer per report) and passes the others to the engine, in order, with every
/// signal that arrives while one of them waits: ``handle(_:)`` runs here for those. What
/// reports depend on that the engine decides (the adapter, our scan, the wishes, our tokens)
/// it tells the reporter as it changes (its properties' `didSet`).
extension BlueZEngine {
  func released(_ path: DBusObjectPath) async {
    guard advert?.path == path else { return }
    logger.debug("bluez \(name): BlueZ released our advert")
    advert = nil
    await connection.unexport(at: path)
    try? await clock.sleep(for: configuration.retryDelay)
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
      if daemon == .present { daemon = .absent }
      adapters = [:]
      reporter.withState { $0.reset() }
      await forgetBlueZSide()
      updateStatus()
    } else {
      logger.info("bluez: bluetoothd is back as \(owner)")
      // Whether it answers, refuses or is gone again, loading its objects says.
      await loadObjects()
    }
  }

  /// A BlueZ signal the reporter passed on (see the extension's documentation); a device's
  /// goes back to the reporter, under its lock.
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

  /// A device's properties changed (a signal passed on to the engine): ``reporter`` remembers
  /// them and reports them (``DeviceReports/deviceChanged(_:_:invalidated:at:)``).
  func deviceChanged(
    _ path: DBusObjectPath, _ changed: [String: DBusValue], invalidated: [String] = []
  ) {
    reporter.deviceChanged(path, changed, invalidated: invalidated)
  }
}
