import DBus
import Foundation

/// Advertisement monitors: `AdvertisementMonitorManager1` on an adapter, a client's
/// `AdvertisementMonitor1` objects read, activated and released as bluetoothd 5.66 does.
extension BlueZDouble {
  func exportMonitorManager(_ name: String) async throws {
    guard let connection, let adapter = adapters[name] else { return }
    try await connection.export(
      DBusInterface(
        "org.bluez.AdvertisementMonitorManager1",
        methods: [
          DBusMethod(
            "RegisterMonitor", input: "o",
            handler: { [weak self] call in
              guard let self, let root = call.body[0].objectPath else { return [] }
              try await self.registerMonitors(name, owner: call.sender ?? "", root: root)
              return []
            },
            afterReply: { [weak self] call in
              guard let root = call.body.first?.objectPath else { return }
              await self?.releaseRefused(AdvertKey(owner: call.sender ?? "", path: root))
            }),
          DBusMethod("UnregisterMonitor", input: "o") { [weak self] call in
            guard let self, let root = call.body[0].objectPath else { return [] }
            try await self.unregisterMonitors(name, owner: call.sender ?? "", root: root)
            return []
          },
        ],
        properties: [
          DBusProperty("SupportedMonitorTypes", .strings(["or_patterns"])),
          DBusProperty("SupportedFeatures", .strings([])),
        ]), at: adapter.path)
  }

  /// Reads the client's `AdvertisementMonitor1` objects below `root` (bluetoothd does it
  /// through the client's ObjectManager), keeps their patterns, calls `Activate`.
  func registerMonitors(_ name: String, owner: String, root: DBusObjectPath) async throws {
    let state = try adapter(name)
    guard let connection else { throw DBusError(BlueZErrors.failed, "restarting") }
    // bluetoothd 5.66 refuses a second registration of the same app (client and root), also
    // when it released that app's monitors (item L).
    let app = AdvertKey(owner: owner, path: root)
    guard !state.monitorApps.contains(app) else {
      throw DBusError(.init("org.bluez.Error.AlreadyExists"), "Already Exists")
    }
    let objects: DBusConnection.ManagedObjects
    do {
      objects = try await connection.managedObjects(of: owner, at: root, timeout: .seconds(2))
    } catch {
      // Real bluetoothd never answers RegisterMonitor when the client's ObjectManager cannot
      // be read (item 15: the caller's own timeout ended the call).
      try await Self.neverAnswer()
    }
    var found = 0
    var registered: Set<AdvertKey> = []
    for (path, interfaces) in objects {
      guard let monitor = interfaces["org.bluez.AdvertisementMonitor1"] else { continue }
      guard monitor["Type"]?.string == "or_patterns", let list = monitor["Patterns"]?.elements
      else { throw DBusError(BlueZErrors.invalidArguments, "Invalid arguments in method call") }
      var patterns: [MonitorPattern] = []
      for item in list {
        guard let fields = item.fields, fields.count == 3, case .byte(let start) = fields[0],
          case .byte(let type) = fields[1], let content = fields[2].bytes
        else { throw DBusError(BlueZErrors.invalidArguments, "Invalid arguments in method call") }
        patterns.append(MonitorPattern(start: start, adType: type, content: content))
      }
      let key = AdvertKey(owner: owner, path: path)
      adapters[name]?.monitors[key] = patterns
      if Self.rssiProperties.allSatisfy({ monitor[$0] == nil }) {
        adapters[name]?.perReportMonitors.insert(key)
        registered.insert(key)
      } else {
        adapters[name]?.perReportMonitors.remove(key)
      }
      var activate = DBusMessage.methodCall(
        destination: owner, path: path, interface: "org.bluez.AdvertisementMonitor1",
        member: "Activate")
      activate.noReplyExpected = true
      _ = try? connection.send(activate)
      found += 1
    }
    guard found > 0 else {
      throw DBusError(BlueZErrors.invalidArguments, "no AdvertisementMonitor1 below \(root)")
    }
    adapters[name]?.monitorApps.insert(app)
    if state.refuseMonitors > 0 {
      // The kernel refused the monitor (Busy): bluetoothd has answered RegisterMonitor, then
      // calls Release on the monitors and keeps the app (item L).
      adapters[name]?.refuseMonitors -= 1
      // The reply goes first: `releaseRefused` calls Release once it is queued.
      refusedMonitors[app] = dropMonitors(name, owner: owner, root: root)
      return
    }
    stalled.remove(name)
    // The kernel restarts the adapter's passive scan for the new monitor and the controller
    // reports every advert on the air (in the VM: once, at that start; item F): bluetoothd
    // gets a report of each device the adapter already has.
    for (path, device) in devices.sorted(by: { $0.key < $1.key })
    where device.hearing == name && advert(of: device) != nil {
      devices[path]?.lastHeard = .now
      tellMonitors("DeviceFound", device, path, only: registered)
    }
    await syncAir()
  }

  /// The `AdvertisementMonitor1` properties that make bluetoothd track a device's RSSI.
  static let rssiProperties = [
    "RSSIHighThreshold", "RSSILowThreshold", "RSSIHighTimeout", "RSSILowTimeout",
    "RSSISamplingPeriod",
  ]

  /// Forgets the app and its monitors, calling `Release` on each monitor it held, as
  /// bluetoothd 5.66 does (its `Release` may reach the client after the reply, item L).
  func unregisterMonitors(_ name: String, owner: String, root: DBusObjectPath) async throws {
    guard adapters[name]?.monitorApps.remove(AdvertKey(owner: owner, path: root)) != nil else {
      throw DBusError(.init("org.bluez.Error.DoesNotExist"), "Does Not Exist")
    }
    let released = dropMonitors(name, owner: owner, root: root)
    Task { [weak self] in
      for key in released { await self?.releaseMonitor(key) }
    }
  }

  /// Forgets the client's monitors below `root` on the adapter; returns them.
  func dropMonitors(_ name: String, owner: String, root: DBusObjectPath) -> [AdvertKey] {
    let dropped =
      adapters[name]?.monitors.keys.filter {
        $0.owner == owner && $0.path.isDescendant(of: root)
      } ?? []
    for key in dropped {
      adapters[name]?.monitors[key] = nil
      adapters[name]?.perReportMonitors.remove(key)
    }
    return dropped
  }

  /// Calls `Release` on the monitors of `app` that `registerMonitors` refused, after the reply
  /// to its `RegisterMonitor` (as bluetoothd: it answers, then the kernel refuses the monitor).
  func releaseRefused(_ app: AdvertKey) {
    for key in refusedMonitors.removeValue(forKey: app) ?? [] { releaseMonitor(key) }
  }

  /// Calls `Release` on a client's monitor object (no reply expected).
  func releaseMonitor(_ key: AdvertKey) {
    var call = DBusMessage.methodCall(
      destination: key.owner, path: key.path, interface: "org.bluez.AdvertisementMonitor1",
      member: "Release")
    call.noReplyExpected = true
    _ = try? connection?.send(call)
  }
}

/// One pattern of an "or_patterns" advertisement monitor.
struct MonitorPattern: Sendable, Hashable {
  var start: UInt8
  var adType: UInt8
  var content: [UInt8]
}
