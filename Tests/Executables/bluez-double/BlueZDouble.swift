import DBus
import Foundation
import Logging
import Synchronization

/// A stand-in for bluetoothd on a (private) system bus: BlueZ's real D-Bus interfaces
/// (ObjectManager at `/`, Adapter1, LEAdvertisingManager1, Device1), its error names, and a
/// simulated air: an advert registered on one adapter appears as a device, with RSSI, on every
/// other powered adapter that is discovering, and is heard again at ``reportInterval``. As
/// real bluetoothd does, a repeat sends `PropertiesChanged` only for the properties whose value
/// changed (usually the RSSI, which jitters; nothing at all for a device at RSSI 127), a device
/// unheard for ``temporaryTimeout`` is removed, and the end of the adapter's last discovery
/// session invalidates the devices' RSSI and removes them (docs/bluez-vm-findings.md items 10
/// and 11).
///
/// GATT (BlueZDouble+Gatt.swift): `GattManager1` apps on each adapter, `Device1.Connect` to a
/// connectable advert's device linking two adapters, the remote GATT objects below it and
/// reads and writes carried to the other adapter's app.
///
/// Tests steer it through `org.nearby.BlueZDouble1` at `/org/nearby/BlueZDouble` (bus name
/// `org.nearby.BlueZDouble`): power, adapter loss, AccessDenied mode, restart, GATT MTU.
///
/// One file per idea, each an extension of the actor: +Adapters (adapters and power),
/// +Discovery (sessions and filters), +Adverts (advert registration), +Monitors (advertisement
/// monitors), +Air (devices, reports, the air kept in step), +Gatt, +Control (the control
/// interface), +Reset. This file: the state, start and restart.
actor BlueZDouble {
  struct Adapter {
    var name: String
    var index: Int
    var powered = true
    var present = true
    var supportedInstances: UInt8 = 5
    /// Discovery sessions by client unique name, with the client's filter.
    var discovery: [String: [String: DBusValue]] = [:]
    var filters: [String: [String: DBusValue]] = [:]
    var adverts: [AdvertKey: RegisteredAdvert] = [:]
    /// Whether the adapter offers AdvertisementMonitorManager1 (set before clients look).
    var monitorSupport = false
    /// Registered "or_patterns" monitors by (client, monitor object): their patterns.
    var monitors: [AdvertKey: [MonitorPattern]] = [:]
    /// The monitor apps registered, by (client, root): bluetoothd answers a second
    /// `RegisterMonitor` of the same app with `AlreadyExists`, and keeps the app after
    /// releasing a monitor the kernel refused (docs/bluez-vm-findings.md item L) until the
    /// client unregisters it or leaves the bus.
    var monitorApps: Set<AdvertKey> = []
    /// How many of the next monitor registrations the kernel refuses (`Busy`; set by the
    /// control's `RefuseMonitors`): answered, then released, the app kept (item L).
    var refuseMonitors = 0
    /// The monitors that set none of the RSSI properties (RSSIHigh/LowThreshold,
    /// RSSIHigh/LowTimeout, RSSISamplingPeriod): bluetoothd 5.66 calls DeviceFound on them for
    /// every matching advertising report, changed or not, and never DeviceLost
    /// (docs/bluez-vm-findings.md item F, probe-monitor.sh). The others get DeviceFound when
    /// the device appears and DeviceLost when it goes (the double's simpler model of
    /// bluetoothd's RSSI tracking).
    var perReportMonitors: Set<AdvertKey> = []
    var path: DBusObjectPath { try! DBusObjectPath("/org/bluez/\(name)") }

    /// The monitors (client, object) of this adapter whose patterns match the advert (our
    /// double builds the AD structures of service and manufacturer data the way bluetoothd
    /// does, see ``RegisteredAdvert/adStructures``).
    func matchingMonitors(_ advert: RegisteredAdvert) -> [AdvertKey] {
      let structures = advert.adStructures
      return monitors.filter { _, patterns in
        patterns.contains { pattern in
          structures.contains { structure in
            guard structure.type == pattern.adType else { return false }
            let bytes = structure.bytes
            let start = Int(pattern.start)
            return start + pattern.content.count <= bytes.count
              && Array(bytes[start..<(start + pattern.content.count)]) == pattern.content
          }
        }
      }.map(\.key)
    }

    /// Whether the controller scans: a discovery session or a registered monitor (bluetoothd
    /// keeps a passive scan on for monitors), whoever the client.
    var isScanning: Bool { !discovery.isEmpty || !monitors.isEmpty }

    /// Whether a monitor of this adapter matches the advert.
    func monitorMatches(_ advert: RegisteredAdvert) -> Bool { !matchingMonitors(advert).isEmpty }
    var address: String { String(format: "00:AA:01:00:00:%02X", index) }
  }

  struct AdvertKey: Hashable, Sendable {
    var owner: String
    var path: DBusObjectPath
  }

  struct Device {
    var path: DBusObjectPath
    var hearing: String
    var advertiser: String
    var advert: AdvertKey
    var rssi: Int16
    /// The advertising-report properties (RSSI, ServiceData, ManufacturerData) as last told to
    /// clients: a repeat emits only those that differ (bluetoothd, item 10).
    var told: [String: DBusValue] = [:]
    /// When the hearing adapter last heard the advert: bluetoothd's temporary-device timer runs
    /// from the last advertising report it got (in the VM no repeat of an unchanged advert
    /// reached it, see ``heardOnceGap``; here every repeat does: the double's model of a
    /// controller that passes repeats on).
    var lastHeard = ContinuousClock.now
  }

  /// The keys `SetDiscoveryFilter` takes, as bluetoothd 5.66's `GetDiscoveryFilters` lists them
  /// (item 7: "Pattern" included).
  static let discoveryFilters = [
    "UUIDs", "RSSI", "Pathloss", "Transport", "DuplicateData", "Discoverable", "Pattern",
  ]
  static let controlName = "org.nearby.BlueZDouble"
  static let controlPath = try! DBusObjectPath("/org/nearby/BlueZDouble")
  static let controlInterface = "org.nearby.BlueZDouble1"
  /// How long after owning org.bluez (and after each other) the adapters are published.
  static let publishDelay = Duration.milliseconds(30)

  let bus: DBusBus
  let adapterCount: Int
  var reportInterval: Duration
  let logger: Logger
  var connection: DBusConnection?
  var adapters: [String: Adapter] = [:]
  var devices: [DBusObjectPath: Device] = [:]
  /// GATT apps and LE links (BlueZDouble+Gatt.swift).
  var gatt = GattState()
  /// Monitors refused by `RegisterMonitor` (by app), released once its reply is queued.
  var refusedMonitors: [AdvertKey: [AdvertKey]] = [:]
  var advertSlots: [AdvertKey: Int] = [:]
  var nextSlot = 1
  var tasks: [Task<Void, Never>] = []
  /// A `Restart` under way (``beginRestart(downFor:)``).
  var restarting: Task<Void, Never>?
  let denied = Flag()
  /// Errors to answer instead of running a method: member → (error name, how many times).
  var failures: [String: (name: String, count: Int)] = [:]
  /// Adapters whose discovery sessions have gone silent until discovery is started again.
  var stalled: Set<String> = []
  /// Like bluetoothd with a pattern monitor and no discovery session: an advert that repeats
  /// itself causes no property change, so devices heard only through a monitor are reported
  /// once (DeviceFound, the object's properties) and then stay silent.
  var quietMonitors = false
  /// Base RSSI of the devices heard from an advertiser adapter's adverts (`SetRSSI`), instead
  /// of the distance formula; 127 is HCI's "not available", sent as it is, without jitter.
  var rssiOverrides: [String: Int16] = [:]
  /// How long a device may go unheard before it is removed (`SetTemporaryTimeout`): real
  /// bluetoothd removes a temporary device not heard for `TemporaryTimeout` (main.conf, 30 s by
  /// default), so a device stays after its advert stops. The double's default is zero, for fast
  /// tests: a device goes with its advert (at once) or at the first report it misses (a
  /// stalled scan); a test that needs bluetoothd's lingering sets it.
  var temporaryTimeout: Duration = .zero
  /// Like the VM's emulated air (`SetHeardOnce`): the kernel passes bluetoothd one report per
  /// device object, so bluetoothd hears a still device only when it creates it, removes it
  /// ``temporaryTimeout`` later although it still advertises (no RSSI invalidated), and
  /// creates it again at the next report, about one kernel discovery cycle (10 s) later: this
  /// gap. `nil`: every repeat reaches bluetoothd (real controllers).
  var heardOnceGap: Duration?
  /// Devices removed by ``expireUnheard(now:)`` under `heardOnceGap`, and when they may come back.
  var returning: [DBusObjectPath: ContinuousClock.Instant] = [:]

  init(bus: DBusBus, adapters: Int, reportInterval: Duration, logger: Logger) {
    self.bus = bus
    self.adapterCount = adapters
    self.reportInterval = reportInterval
    self.logger = logger
    var adapters: [String: Adapter] = [:]
    for index in 0..<adapterCount {
      adapters["hci\(index)"] = Adapter(name: "hci\(index)", index: index)
    }
    self.adapters = adapters
  }

  // MARK: Life

  /// Connects, owns `org.bluez` and the control name, exports the adapters.
  func start() async throws {
    let connection = try await DBusConnection(bus, logger: logger)
    self.connection = connection
    await connection.addObjectManager(at: .root)
    let denied = self.denied
    await connection.setCallFilter { call in
      guard denied.value, call.path != Self.controlPath else { return nil }
      return DBusError(
        .accessDenied,
        "Rejected send message, 1 matched rules; type=\"method_call\", sender=\"\(call.sender ?? "")\" "
          + "interface=\"\(call.interface ?? "")\" member=\"\(call.member ?? "")\" "
          + "destination=\"org.bluez\" (the double's AccessDenied mode)")
    }
    try await connection.export(controlInterface(), at: Self.controlPath)
    let owners = try await connection.signals(
      matching: DBusMatchRule(
        sender: "org.freedesktop.DBus", interface: "org.freedesktop.DBus",
        member: "NameOwnerChanged"))
    tasks.append(
      Task { [weak self] in
        for await signal in owners {
          guard let body = try? signal.arguments("sss"), let name = body[0].string,
            name.hasPrefix(":"), body[2].string == ""
          else { continue }
          await self?.clientLeft(name)
        }
      })
    tasks.append(
      Task { [weak self] in
        while !Task.isCancelled {
          guard let interval = await self?.reportInterval else { return }
          try? await Task.sleep(for: interval)
          await self?.report()
        }
      })
    guard try await connection.requestName("org.bluez") == .primaryOwner else {
      throw DBusError(.failed, "org.bluez is already owned")
    }
    // Like bluetoothd (5.66): it owns org.bluez before its adapters exist, then publishes them
    // one by one (InterfacesAdded), in no fixed order (hci1 before hci0 seen), after the
    // controllers answer it; so a client that reads GetManagedObjects when the name appears
    // can see none or some of them (docs/bluez-vm-findings.md item 20). The double publishes
    // the highest index first, a little after the name and after each other.
    for name in adapters.keys.sorted().reversed() where adapters[name]!.present {
      try await Task.sleep(for: Self.publishDelay)
      try await publish(name)
    }
    // Last: the tests (and the ready file) wait for this name, so they start with every adapter.
    guard try await connection.requestName(Self.controlName) == .primaryOwner else {
      throw DBusError(.failed, "\(Self.controlName) is already owned")
    }
    logger.info("bluez double up as \(connection.uniqueName) with \(adapters.count) adapters")
  }

  /// Starts ``restart(downFor:)`` in the double's own task (the control call's `Restart`),
  /// unless a restart is already under way.
  func beginRestart(downFor: Duration) {
    guard restarting == nil else { return }
    restarting = Task { [weak self] in
      do {
        try await self?.restart(downFor: downFor)
      } catch {
        self?.logger.error("restart failed: \(error)")
      }
      await self?.restarted()
    }
  }

  private func restarted() { restarting = nil }

  /// Ends the double: cancels and awaits its tasks (a restart under way too), closes the bus
  /// connection. What `main` does on SIGTERM or SIGINT.
  func stop() async {
    let running = tasks + [restarting].compactMap { $0 }
    tasks = []
    for task in running { task.cancel() }
    for task in running { await task.value }
    connection?.close()
    connection = nil
  }

  /// Drops the bus connection (names lost) and, after `downFor`, comes back with fresh state:
  /// what a bluetoothd restart looks like to clients.
  func restart(downFor: Duration) async throws {
    for task in tasks { task.cancel() }
    tasks = []
    connection?.close()
    connection = nil
    for name in adapters.keys {
      adapters[name]?.adverts = [:]
      adapters[name]?.discovery = [:]
      adapters[name]?.filters = [:]
      // A restarted bluetoothd has no monitors either (else the stale ones would count as a
      // scan that refuses the first advert, see `register`).
      adapters[name]?.monitors = [:]
      adapters[name]?.monitorApps = []
    }
    devices = [:]
    refusedMonitors = [:]
    // Its apps and links go with it (the objects went with the connection).
    gatt = GattState()
    try await Task.sleep(for: downFor)
    try await start()
  }
}

/// A flag the call filter reads from the object actor while the double's actor writes it.
final class Flag: Sendable {
  private let storage = Atomic<Bool>(false)
  var value: Bool {
    get { storage.load(ordering: .relaxed) }
    set { storage.store(newValue, ordering: .relaxed) }
  }
}
