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
  private var advertSlots: [AdvertKey: Int] = [:]
  private var nextSlot = 1
  private var tasks: [Task<Void, Never>] = []
  private let denied = Flag()
  /// Errors to answer instead of running a method: member → (error name, how many times).
  private var failures: [String: (name: String, count: Int)] = [:]
  /// Adapters whose discovery sessions have gone silent until discovery is started again.
  private var stalled: Set<String> = []
  /// Like bluetoothd with a pattern monitor and no discovery session: an advert that repeats
  /// itself causes no property change, so devices heard only through a monitor are reported
  /// once (DeviceFound, the object's properties) and then stay silent.
  private var quietMonitors = false
  /// Base RSSI of the devices heard from an advertiser adapter's adverts (`SetRSSI`), instead
  /// of the distance formula; 127 is HCI's "not available", sent as it is, without jitter.
  private var rssiOverrides: [String: Int16] = [:]
  /// How long a device may go unheard before it is removed (`SetTemporaryTimeout`): real
  /// bluetoothd removes a temporary device not heard for `TemporaryTimeout` (main.conf, 30 s by
  /// default), so a device stays after its advert stops. The double's default is zero, for fast
  /// tests: a device goes with its advert (at once) or at the first report it misses (a
  /// stalled scan); a test that needs bluetoothd's lingering sets it.
  private var temporaryTimeout: Duration = .zero
  /// Like the VM's emulated air (`SetHeardOnce`): the kernel passes bluetoothd one report per
  /// device object, so bluetoothd hears a still device only when it creates it, removes it
  /// ``temporaryTimeout`` later although it still advertises (no RSSI invalidated), and
  /// creates it again at the next report, about one kernel discovery cycle (10 s) later: this
  /// gap. `nil`: every repeat reaches bluetoothd (real controllers).
  private var heardOnceGap: Duration?
  /// Devices removed by ``expireUnheard(now:)`` under `heardOnceGap`, and when they may come back.
  private var returning: [DBusObjectPath: ContinuousClock.Instant] = [:]

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
    // Its apps and links go with it (the objects went with the connection).
    gatt = GattState()
    try await Task.sleep(for: downFor)
    try await start()
  }

  // MARK: Adapters

  /// Publishes an adapter as bluetoothd 5.66 does when it starts or a controller appears
  /// (seen in the BlueZ VM: bluetoothd restarted, btvirt restarted;
  /// docs/bluez-vm-findings.md item 23): `InterfacesAdded` says `Powered` false (`PowerState`
  /// "off-enabling"), then `AutoEnable` powers it on, a `PropertiesChanged` later.
  private func publish(_ name: String) async throws {
    guard let wanted = adapters[name]?.powered else { return }
    adapters[name]?.powered = false
    try await exportAdapter(name)
    guard wanted else { return }
    try await Task.sleep(for: Self.publishDelay)
    await poweredChanged(name, true, fromPeer: false)
  }

  private func exportAdapter(_ name: String) async throws {
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

  private func exportMonitorManager(_ name: String) async throws {
    guard let connection, let adapter = adapters[name] else { return }
    try await connection.export(
      DBusInterface(
        "org.bluez.AdvertisementMonitorManager1",
        methods: [
          DBusMethod("RegisterMonitor", input: "o") { [weak self] call in
            guard let self, let root = call.body[0].objectPath else { return [] }
            try await self.registerMonitors(name, owner: call.sender ?? "", root: root)
            return []
          },
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
      let refused = dropMonitors(name, owner: owner, root: root)
      Task { [weak self] in
        try? await Task.sleep(for: .milliseconds(20))
        for key in refused { await self?.releaseMonitor(key) }
      }
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
  private func dropMonitors(_ name: String, owner: String, root: DBusObjectPath) -> [AdvertKey] {
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

  /// Calls `Release` on a client's monitor object (no reply expected).
  private func releaseMonitor(_ key: AdvertKey) {
    var call = DBusMessage.methodCall(
      destination: key.owner, path: key.path, interface: "org.bluez.AdvertisementMonitor1",
      member: "Release")
    call.noReplyExpected = true
    _ = try? connection?.send(call)
  }

  /// Leaves a method call unanswered, as bluetoothd does in the cases of item 15: the caller's
  /// timeout ends it. The handler gives up after 10 minutes, longer than any caller waits.
  private static func neverAnswer() async throws -> Never {
    try await Task.sleep(for: .seconds(600))
    throw DBusError(BlueZErrors.failed, "no answer (as bluetoothd)")
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

  private func updateCounts(_ name: String) async {
    guard let adapter = adapters[name], let connection else { return }
    try? await connection.setProperty(
      "Discovering", to: .boolean(!adapter.discovery.isEmpty), interface: "org.bluez.Adapter1",
      at: adapter.path)
    try? await connection.setProperty(
      "ActiveInstances", to: .byte(UInt8(adapter.adverts.count)),
      interface: "org.bluez.LEAdvertisingManager1", at: adapter.path)
  }

  // MARK: Discovery

  func setFilter(_ name: String, client: String, _ filter: DBusValue) async throws(DBusError) {
    _ = try adapter(name)
    guard let map = filter.stringDictionary else {
      throw DBusError(BlueZErrors.invalidArguments, "Invalid arguments in method call")
    }
    // bluetoothd refuses a key it does not know (item 14: `{"Bogus": true}` answered
    // InvalidArguments), as it refuses a bad Transport.
    guard map.keys.allSatisfy(Self.discoveryFilters.contains) else {
      throw DBusError(BlueZErrors.invalidArguments, "Invalid arguments in method call")
    }
    if let transport = map["Transport"] {
      guard let text = transport.string, ["auto", "bredr", "le"].contains(text) else {
        throw DBusError(BlueZErrors.invalidArguments, "Invalid arguments in method call")
      }
    }
    adapters[name]?.filters[client] = map
  }

  /// Throws the error scheduled for `member` by `FailNext`, if any is left.
  private func scheduledFailure(_ member: String) throws(DBusError) {
    guard let failure = failures[member], failure.count > 0 else { return }
    failures[member] = failure.count > 1 ? (failure.name, failure.count - 1) : nil
    throw DBusError(.init(failure.name), "scheduled by FailNext")
  }

  func startDiscovery(_ name: String, client: String) async throws(DBusError) {
    try scheduledFailure("StartDiscovery")
    let adapter = try adapter(name)
    guard adapter.powered else { throw DBusError(BlueZErrors.notReady, "Resource Not Ready") }
    guard adapter.discovery[client] == nil else {
      throw DBusError(BlueZErrors.inProgress, "Operation already in progress")
    }
    adapters[name]?.discovery[client] = adapter.filters[client] ?? [:]
    stalled.remove(name)
    await updateCounts(name)
    await syncAir()
  }

  func stopDiscovery(_ name: String, client: String) async throws(DBusError) {
    let adapter = try adapter(name)
    guard adapter.powered else { throw DBusError(BlueZErrors.notReady, "Resource Not Ready") }
    guard adapter.discovery[client] != nil else {
      throw DBusError(BlueZErrors.failed, "No discovery started")
    }
    adapters[name]?.discovery[client] = nil
    if adapters[name]?.discovery.isEmpty == true { await discoveryEnded(name) }
    await updateCounts(name)
  }

  /// The adapter's last discovery session ended: as bluetoothd does (item 11), each device it
  /// heard gets `PropertiesChanged` with RSSI invalidated, then is removed (InterfacesRemoved);
  /// the caller then sets `Discovering` false. While another client still discovers, nothing
  /// of this happens. Devices a registered monitor matches come back through ``syncAir()``.
  private func discoveryEnded(_ name: String) async {
    guard let connection else { return }
    // A connected device is not temporary: bluetoothd keeps it.
    let linked = gatt.linkedDevices
    let heard = devices.filter { $0.value.hearing == name && !linked.contains($0.key) }
    for (path, _) in heard.sorted(by: { $0.key < $1.key }) {
      try? connection.emit(
        .signal(
          path: path, interface: "org.freedesktop.DBus.Properties", member: "PropertiesChanged",
          body: [.string("org.bluez.Device1"), .vardict([:]), .strings(["RSSI"])]))
    }
    for (path, device) in heard {
      devices[path] = nil
      await connection.unexport(at: path)
      tellMonitors("DeviceLost", device, path)
    }
  }

  /// `RemoveDevice`: a connected device is disconnected first, as bluetoothd does.
  private func removeDevice(_ path: DBusObjectPath) async throws(DBusError) {
    let link = gatt.link(at: path)
    if let link { await dropLink(link.id) }
    guard devices.removeValue(forKey: path) != nil || link != nil else {
      throw DBusError(BlueZErrors.doesNotExist, "Does Not Exist")
    }
    await connection?.unexport(at: path)
  }

  // MARK: Advertising

  func register(_ name: String, owner: String, path: DBusObjectPath) async throws {
    try scheduledFailure("RegisterAdvertisement")
    let adapter = try adapter(name)
    let key = AdvertKey(owner: owner, path: path)
    guard adapter.adverts[key] == nil else {
      throw DBusError(BlueZErrors.alreadyExists, "Already Exists")
    }
    guard adapter.adverts.count < Int(adapter.supportedInstances) else {
      throw DBusError(BlueZErrors.notPermitted, "Maximum advertisements reached")
    }
    guard let connection else { throw DBusError(BlueZErrors.failed, "restarting") }
    // bluetoothd reads the advert from the client's object, as here.
    let properties: [String: DBusValue]
    do {
      properties = try await connection.allProperties(
        interface: "org.bluez.LEAdvertisement1", of: owner, at: path, timeout: .seconds(2))
    } catch {
      // Real bluetoothd never answers RegisterAdvertisement of an object the caller does not
      // export (item 15: the caller's own timeout ended the call, NoReply after 25 s).
      try await Self.neverAnswer()
    }
    let advert = try RegisteredAdvert(owner: owner, path: path, properties: properties)
    guard advert.payloadLength <= 31 else {
      throw DBusError(BlueZErrors.invalidLength, "Advertising data too long.")
    }
    guard adapters[name]?.powered == true else {
      throw DBusError(BlueZErrors.notReady, "Resource Not Ready")
    }
    if advert.type == "broadcast", let current = adapters[name], current.isScanning,
      current.adverts.isEmpty
    {
      // The first advert of an adapter that scans is refused, as on the real stack
      // (docs/bluez-vm-findings.md item D): with no advert running, the kernel sets a new
      // random address for it (Linux 6.1 defers that only while advertising) and the
      // controller refuses LE Set Random Address while it scans (Bluetooth Core: Command
      // Disallowed; kernel log "Opcode 0x2005 failed: -16"); bluetoothd answers Failed. Any
      // client's discovery session or monitor counts, and so does a rotation that unregisters
      // the old advert first. With an advert running, the change waits and BlueZ accepts.
      // A connectable ("peripheral") advert goes out from the adapter's public address (the
      // kernel sets a random address only for a non-connectable advert when privacy is off:
      // hci_update_random_address_sync), so it is not refused (read in Linux 6.1, not yet
      // seen in the VM).
      throw DBusError(BlueZErrors.failed, "Failed to register advertisement")
    }
    adapters[name]?.adverts[key] = advert
    if advertSlots[key] == nil {
      advertSlots[key] = nextSlot
      nextSlot += 1
    }
    await updateCounts(name)
    await syncAir()
  }

  func unregister(_ name: String, owner: String, path: DBusObjectPath) async throws(DBusError) {
    _ = try adapter(name)
    let key = AdvertKey(owner: owner, path: path)
    guard adapters[name]?.adverts.removeValue(forKey: key) != nil else {
      throw DBusError(BlueZErrors.doesNotExist, "Does Not Exist")
    }
    await updateCounts(name)
    await syncAir()
  }

  /// Calls `Release` on the client's advert object (bluetoothd does when it drops one).
  private func release(_ key: AdvertKey, on name: String) async {
    var call = DBusMessage.methodCall(
      destination: key.owner, path: key.path, interface: "org.bluez.LEAdvertisement1",
      member: "Release")
    call.noReplyExpected = true
    _ = try? connection?.send(call)
  }

  private func clientLeft(_ client: String) async {
    for name in adapters.keys {
      let keptMonitors = adapters[name]?.monitors.filter { $0.key.owner != client } ?? [:]
      adapters[name]?.monitors = keptMonitors
      // Computed first: the right side of an optional-chained assignment runs inside the
      // access to `adapters` (exclusivity).
      let keptApps: Set<AdvertKey> = adapters[name]?.monitorApps.filter { $0.owner != client } ?? []
      adapters[name]?.monitorApps = keptApps
      let had = adapters[name]?.discovery.removeValue(forKey: client) != nil
      if had, adapters[name]?.discovery.isEmpty == true { await discoveryEnded(name) }
      adapters[name]?.filters[client] = nil
      let before = adapters[name]?.adverts.count ?? 0
      let kept = adapters[name]?.adverts.filter { $0.key.owner != client } ?? [:]
      adapters[name]?.adverts = kept
      if had || before != adapters[name]?.adverts.count { await updateCounts(name) }
    }
    await gattClientLeft(client)
    await syncAir()
  }

  // MARK: The air

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
  private func devicePath(_ key: AdvertKey, advertiser: Adapter, hearer: Adapter)
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
  private func expireUnheard(now: ContinuousClock.Instant) async {
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
  private func tellMonitors(
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

  private func deviceInterface(_ device: Device) -> DBusInterface {
    let advert = advert(of: device)
    let address = device.path.rawValue.split(separator: "/").last!.dropFirst(4)
      .replacingOccurrences(of: "_", with: ":")
    var properties = [
      DBusProperty("Address", .string(address)),
      DBusProperty("AddressType", .string(address.hasPrefix("C0:DE:") ? "random" : "public")),
      DBusProperty("Alias", .string(address.replacingOccurrences(of: ":", with: "-"))),
      DBusProperty("Adapter", .objectPath(adapters[device.hearing]!.path)),
      DBusProperty("Paired", .boolean(false)),
      DBusProperty("Bonded", .boolean(false)),
      DBusProperty("Trusted", .boolean(false), access: .readWrite),
      DBusProperty("Blocked", .boolean(false), access: .readWrite),
      DBusProperty("LegacyPairing", .boolean(false)),
      DBusProperty("Connected", .boolean(false)),
      DBusProperty("ServicesResolved", .boolean(false)),
      DBusProperty("UUIDs", .strings(advert?.serviceUUIDs ?? [])),
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
  private func serviceData(_ advert: RegisteredAdvert?) -> DBusValue {
    .vardict(
      Dictionary(
        (advert?.serviceData ?? [:]).map { (fullUUID($0.key), DBusValue.bytes($0.value)) },
        uniquingKeysWith: { first, _ in first }))
  }

  private func manufacturerData(_ advert: RegisteredAdvert?) -> DBusValue {
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
  private func report() async {
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
  private func currentRSSI(_ device: Device) -> Int16 {
    let base = rssiOverrides[device.advertiser] ?? device.rssi
    return base == 127 ? 127 : base + Int16.random(in: -2...2)
  }

  /// The properties an advertising report sets: RSSI, and the advert's service and
  /// manufacturer data when it has any.
  private func reportProperties(_ device: Device, _ advert: RegisteredAdvert, rssi: Int16)
    -> [String: DBusValue]
  {
    var properties: [String: DBusValue] = ["RSSI": .int16(rssi)]
    if !advert.serviceData.isEmpty { properties["ServiceData"] = serviceData(advert) }
    if !advert.manufacturerData.isEmpty {
      properties["ManufacturerData"] = manufacturerData(advert)
    }
    return properties
  }

  // MARK: Control

  private func controlInterface() -> DBusInterface {
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

  private func reset() async {
    await resetGatt()
    denied.value = false
    quietMonitors = false
    failures = [:]
    stalled = []
    rssiOverrides = [:]
    for name in adapters.keys {
      adapters[name]?.monitors = [:]
      adapters[name]?.monitorApps = []
      adapters[name]?.refuseMonitors = 0
      await setMonitorSupport(name, false)
    }
    reportInterval = .milliseconds(100)
    temporaryTimeout = .zero
    heardOnceGap = nil
    returning = [:]
    for name in adapters.keys where !(adapters[name]!.present) { await setPresent(name, true) }
    for (name, adapter) in adapters {
      for (key, _) in adapter.adverts { await release(key, on: name) }
      adapters[name]?.adverts = [:]
      adapters[name]?.discovery = [:]
      adapters[name]?.filters = [:]
      adapters[name]?.supportedInstances = 5
      try? await connection?.setProperty(
        "SupportedInstances", to: .byte(5), interface: "org.bluez.LEAdvertisingManager1",
        at: adapter.path)
      await poweredChanged(name, true, fromPeer: false)
      await updateCounts(name)
    }
    for path in devices.keys { await connection?.unexport(at: path) }
    devices = [:]
  }

  private func setDenied(_ on: Bool) { denied.value = on }
  private func setQuietMonitors(_ on: Bool) { quietMonitors = on }
  private func failNext(_ member: String, _ name: String, _ count: Int) {
    failures[member] = (name, count)
  }
  private func stall(_ adapter: String) { stalled.insert(adapter) }

  /// Sets the base RSSI of every device heard from `advertiser`'s adverts (the jitter stays);
  /// 127 is HCI's "RSSI not available", sent as it is, without jitter, as btvirt's emulated
  /// controllers do for every report (item 8); 0 or any other value outside −127…−1 dBm goes
  /// back to the distance formula.
  private func setRSSI(_ advertiser: String, _ rssi: Int) {
    rssiOverrides[advertiser] = (-127 ... -1).contains(rssi) || rssi == 127 ? Int16(rssi) : nil
  }

  /// Sets how long a device may go unheard before it is removed (bluetoothd's
  /// `TemporaryTimeout`, 30 s by default); zero, the double's default, removes it with its
  /// advert or at the first report it misses.
  private func setTemporaryTimeout(_ timeout: Duration) { temporaryTimeout = timeout }

  /// Turns the VM's emulated air on or off (see ``heardOnceGap``): with it, a device is heard
  /// only when created, removed ``temporaryTimeout`` later, and back `gap` after that.
  private func setHeardOnce(_ on: Bool, gap: Duration) {
    heardOnceGap = on ? gap : nil
    returning = [:]
  }

  /// Adds or removes AdvertisementMonitorManager1 on an adapter (re-exports the adapter).
  private func setRefuseMonitors(_ name: String, _ count: Int) {
    adapters[name]?.refuseMonitors = count
  }

  private func setMonitorSupport(_ name: String, _ on: Bool) async {
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

  private func monitorPaths(_ name: String) -> [DBusObjectPath] {
    adapters[name].map { $0.monitors.keys.map(\.path).sorted() } ?? []
  }
  /// Every pattern of the monitors registered on an adapter, in a stable order.
  private func monitorPatterns(_ name: String) -> [MonitorPattern] {
    adapters[name]?.monitors.sorted { $0.key.path < $1.key.path }.flatMap(\.value) ?? []
  }
  private func setInterval(_ interval: Duration) { reportInterval = interval }

  private func setInstances(_ name: String, _ count: UInt8) async {
    guard let adapter = adapters[name] else { return }
    adapters[name]?.supportedInstances = count
    try? await connection?.setProperty(
      "SupportedInstances", to: .byte(count), interface: "org.bluez.LEAdvertisingManager1",
      at: adapter.path)
  }

  private func setPresent(_ name: String, _ present: Bool) async {
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

  private func advertList(_ name: String) -> [DBusValue] {
    (adapters[name]?.adverts.values.map { advert in
      DBusValue.vardict([
        "Owner": .string(advert.owner), "Path": .objectPath(advert.path),
        "Type": .string(advert.type),
        "ServiceData": .vardict(advert.serviceData.mapValues { .bytes($0) }),
        "Length": .uint32(UInt32(advert.payloadLength)),
      ])
    }) ?? []
  }

  private func discoveryClients(_ name: String) -> [String] {
    adapters[name].map { Array($0.discovery.keys).sorted() } ?? []
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

/// One pattern of an "or_patterns" advertisement monitor.
struct MonitorPattern: Sendable, Hashable {
  var start: UInt8
  var adType: UInt8
  var content: [UInt8]
}

/// The AD structure bluetoothd builds for service data: its AD type and its bytes after the
/// type (UUID little-endian, then the data).
func serviceDataStructure(uuid: String, data: [UInt8]) -> (type: UInt8, bytes: [UInt8]) {
  let hex = shortUUID(uuid).replacingOccurrences(of: "-", with: "")
  var uuidBytes: [UInt8] = []
  var index = hex.startIndex
  while index < hex.endIndex, let next = hex.index(index, offsetBy: 2, limitedBy: hex.endIndex) {
    uuidBytes.append(UInt8(hex[index..<next], radix: 16) ?? 0)
    index = next
  }
  let type: UInt8 = uuidBytes.count == 2 ? 0x16 : uuidBytes.count == 4 ? 0x20 : 0x21
  return (type, uuidBytes.reversed() + data)
}
