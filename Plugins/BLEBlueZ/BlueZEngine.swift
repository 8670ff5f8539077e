import Core
import DBus
import Logging
import Strategy
import Tokens

/// The BlueZ medium's state and its conversation with bluetoothd. An actor: BlueZ signals,
/// the manager's requests, `Release` calls and the watchdog all arrive here.
///
/// The engine keeps what the manager *wants* (a token to transmit, token scanning on or off,
/// beacon scanning off or on and whether in low power) apart from what BlueZ *has* (an advert
/// registered, a discovery session or a pattern monitor); every event that can
/// change the latter (power, adapter loss, bluetoothd restart, `Release`) ends in
/// ``reconcile()``, which makes BlueZ match the wishes again without the app doing anything.
actor BlueZEngine {
  static let service = "org.bluez"
  static let advertRoot = try! DBusObjectPath("/org/nearby/ble")

  let configuration: BlueZConfiguration
  let connection: DBusConnection
  let logger: Logger
  let sightings: AsyncStream<Sighting>.Continuation
  let statuses: AsyncStream<MediumStatus>.Continuation
  let advertisements: AsyncStream<BlueZAdvertisement>.Continuation
  let beaconSightings: AsyncStream<BeaconSighting>.Continuation

  private var adapters: [DBusObjectPath: AdapterState] = [:]
  private var devices: [DBusObjectPath: DeviceState] = [:]
  private var chosen: DBusObjectPath?
  private var bluezPresent = false
  private var accessDenied = false
  private var status: MediumStatus?

  private var wantedToken: Token?
  private var wantScanning = false
  /// The beacon-scanning wish: `nil` when off.
  private var wantBeacons: BeaconWish?
  /// The registered advert: its object path and the token it carries.
  private var advert: (path: DBusObjectPath, token: Token)?
  private var advertCounter = 0
  /// Our scan at BlueZ: a discovery session or a registered monitor, `nil` when none.
  private var activeScan: ScanPlan?
  /// The patterns of the monitor object we export, `nil` when none is exported.
  private var exportedMonitor: MonitorPatterns?
  private var lastReport = ContinuousClock.now
  /// A scan change is running; the others wait in `scanWaiters` (see ``applyScan(throwing:)``).
  private var isApplyingScan = false
  private var scanWaiters: [CheckedContinuation<Void, Never>] = []
  /// Devices a pattern monitor reported found (DeviceFound) and not yet lost (DeviceLost).
  private var monitorPresent: Set<DBusObjectPath> = []
  private var tasks: [Task<Void, Never>] = []
  private var isShutDown = false

  init(
    configuration: BlueZConfiguration, connection: DBusConnection, logger: Logger,
    sightings: AsyncStream<Sighting>.Continuation, statuses: AsyncStream<MediumStatus>.Continuation,
    advertisements: AsyncStream<BlueZAdvertisement>.Continuation,
    beaconSightings: AsyncStream<BeaconSighting>.Continuation
  ) {
    self.advertisements = advertisements
    self.beaconSightings = beaconSightings
    self.configuration = configuration
    self.connection = connection
    self.logger = logger
    self.sightings = sightings
    self.statuses = statuses
  }

  var name: String { adapters[chosen ?? .root]?.name ?? configuration.adapter ?? "no adapter" }

  // MARK: Startup

  /// Subscribes to BlueZ's signals first, then reads its objects, as careful clients do (no
  /// change can fall between the two).
  func start() async throws(DBusError) {
    let signals = try await connection.signals(
      matching: DBusMatchRule(sender: Self.service), bufferingPolicy: .bufferingNewest(65_536))
    let owners = try await connection.nameOwnerChanges(of: Self.service)
    tasks.append(
      Task { [weak self] in
        for await signal in signals { await self?.handle(signal) }
      })
    tasks.append(
      Task { [weak self] in
        for await change in owners { await self?.ownerChanged(to: change.new) }
      })
    tasks.append(
      Task { [weak self] in
        while !Task.isCancelled {
          try? await Task.sleep(for: .seconds(1))
          await self?.reportPresentBeacons()
        }
      })
    tasks.append(
      Task { [weak self, watchdog = configuration.scanWatchdog] in
        while !Task.isCancelled {
          try? await Task.sleep(for: watchdog / 3)
          await self?.checkWatchdog()
        }
      })
    await connection.addObjectManager(at: Self.advertRoot)
    await loadObjects()
  }

  /// Reads BlueZ's objects and picks the adapter; sets the status.
  private func loadObjects() async {
    adapters = [:]
    devices = [:]
    advert = nil
    activeScan = nil
    do {
      let objects = try await connection.managedObjects(
        of: Self.service, timeout: configuration.callTimeout)
      bluezPresent = true
      accessDenied = false
      for (path, interfaces) in objects {
        if interfaces["org.bluez.Adapter1"] != nil {
          adapters[path] = AdapterState(path: path, interfaces: interfaces)
        }
        if let properties = interfaces["org.bluez.Device1"] {
          var device = DeviceState()
          _ = device.apply(properties)
          devices[path] = device
        }
      }
    } catch {
      bluezPresent = error.name != .serviceUnknown && error.name != .nameHasNoOwner
      accessDenied = error.name == .accessDenied
      if !accessDenied, bluezPresent {
        logger.warning("cannot read BlueZ's objects: \(error)")
      }
    }
    choose()
    await reconcile()
  }

  /// Picks the configured adapter, else the first powered one, else the first.
  private func choose() {
    if let wanted = configuration.adapter {
      chosen = adapters.values.first { $0.name == wanted }?.path
    } else {
      let sorted = adapters.values.sorted { $0.path < $1.path }
      chosen = (sorted.first { $0.powered } ?? sorted.first)?.path
    }
  }

  // MARK: Requests from the manager

  func transmit(_ token: Token) async throws {
    let object = AdvertObject(
      frame: BLETokenFrame(token: token, txPower: configuration.txPowerAtZeroMeters),
      localName: configuration.localName)
    guard object.legacyLength <= AdvertObject.legacyLimit else {
      throw BlueZMediumError.advertisementTooLong(
        bytes: object.legacyLength, limit: AdvertObject.legacyLimit)
    }
    wantedToken = token
    try await applyAdvert(throwing: true)
  }

  func stopTransmitting() async {
    wantedToken = nil
    try? await applyAdvert(throwing: false)
  }

  func startScanning() async throws {
    wantScanning = true
    lastReport = .now
    try await applyScan(throwing: true)
  }

  func stopScanning() async {
    wantScanning = false
    try? await applyScan(throwing: false)
  }

  func startBeaconScanning(lowPower: Bool) async throws {
    if wantBeacons == nil { lastReport = .now }
    wantBeacons = BeaconWish(lowPower: lowPower)
    try await applyScan(throwing: true)
  }

  func stopBeaconScanning() async {
    wantBeacons = nil
    try? await applyScan(throwing: false)
  }

  func shutdown() async {
    guard !isShutDown else { return }
    wantedToken = nil
    wantScanning = false
    wantBeacons = nil
    try? await applyAdvert(throwing: false)
    try? await applyScan(throwing: false)
    isShutDown = true
    for task in tasks { task.cancel() }
    tasks = []
    sightings.finish()
    statuses.finish()
    advertisements.finish()
    beaconSightings.finish()
    connection.close()
  }

  // MARK: Making BlueZ match the wishes

  /// Re-applies the wishes after anything changed; errors are logged and the status tells.
  private func reconcile() async {
    updateStatus()
    try? await applyAdvert(throwing: false)
    try? await applyScan(throwing: false)
  }

  /// Why nothing can be done now, or `nil` when the adapter is usable.
  private func problem() -> BlueZMediumError? {
    if accessDenied { return .permissionDenied(BlueZFix.permission) }
    if !bluezPresent { return .bluetoothdUnavailable(BlueZFix.noDaemon) }
    guard let chosen, let adapter = adapters[chosen] else {
      return .poweredOff(BlueZFix.noAdapter(configuration.adapter))
    }
    if !adapter.powered { return .poweredOff(BlueZFix.off(adapter.name)) }
    return nil
  }

  private func updateStatus() {
    let next: MediumStatus =
      switch problem() {
      case nil: .ready
      case .poweredOff: .poweredOff
      case .permissionDenied(let fix): .permissionDenied(fix)
      case let other?: .unavailable(other.description)
      }
    guard next != status, !isShutDown else { return }
    status = next
    logger.debug("bluez \(name): status \(next)")
    statuses.yield(next)
  }

  private func applyAdvert(throwing: Bool) async throws {
    if let current = advert, current.token != wantedToken || problem() != nil {
      advert = nil
      if problem() == nil {
        _ = try? await bluez(
          chosen!, "org.bluez.LEAdvertisingManager1", "UnregisterAdvertisement",
          [.objectPath(current.path)])
      }
      await connection.unexport(at: current.path)
    }
    guard let token = wantedToken, advert == nil else { return }
    if let problem = problem() {
      if throwing { throw problem }
      return
    }
    let adapter = chosen!
    guard adapters[adapter]?.hasAdvertising == true else {
      if throwing {
        throw BlueZMediumError.bluez(
          DBusError(.notSupported, "adapter \(name) cannot advertise (no LEAdvertisingManager1)"))
      }
      return
    }
    advertCounter += 1
    let path = try Self.advertRoot.appending("advert\(advertCounter)")
    let object = AdvertObject(
      frame: BLETokenFrame(token: token, txPower: configuration.txPowerAtZeroMeters),
      localName: configuration.localName)
    try await connection.export(
      object.interface { [weak self] in await self?.released(path) }, at: path)
    do {
      _ = try await bluez(
        adapter, "org.bluez.LEAdvertisingManager1", "RegisterAdvertisement",
        [.objectPath(path), .vardict([:])])
      advert = (path, token)
      logger.debug("bluez \(name): advertising \(token)")
    } catch {
      await connection.unexport(at: path)
      await noteAccess(error)
      logger.warning("bluez \(name): cannot advertise: \(error)")
      if throwing { throw BlueZMediumError.bluez(error) }
    }
  }

  private static var monitorPath: DBusObjectPath { try! advertRoot.appending("monitor0") }

  /// How BlueZ should scan for the wishes now: `nil` when nothing is wanted. A pattern monitor
  /// where the adapter offers "or_patterns" monitors and every wish allows passive scanning
  /// (token scanning always does, beacon scanning when low power is asked); else discovery.
  private var wantedScan: ScanPlan? {
    guard wantScanning || wantBeacons != nil else { return nil }
    guard let chosen, adapters[chosen]?.canMonitor == true, wantBeacons?.lowPower ?? true else {
      return .discovery
    }
    var patterns: MonitorPatterns = []
    if wantScanning { patterns.insert(.tokens) }
    if wantBeacons != nil { patterns.insert(.beacons) }
    return .monitor(patterns)
  }

  /// Ends our scan at BlueZ: unregisters the monitor or stops discovery.
  private func stopActiveScan() async {
    let active = activeScan
    activeScan = nil
    guard problem() == nil, let chosen, let active else { return }
    switch active {
    case .monitor:
      _ = try? await bluez(
        chosen, "org.bluez.AdvertisementMonitorManager1", "UnregisterMonitor",
        [.objectPath(Self.advertRoot)])
    case .discovery:
      _ = try? await bluez(chosen, "org.bluez.Adapter1", "StopDiscovery", [])
    }
  }

  /// Makes BlueZ's scan match ``wantedScan``, one change at a time: token and beacon wishes
  /// arrive from different tasks, and two changes interleaving across their awaits would
  /// register a monitor twice or record a plan BlueZ does not have.
  private func applyScan(throwing: Bool) async throws {
    while isApplyingScan {
      await withCheckedContinuation { scanWaiters.append($0) }
    }
    isApplyingScan = true
    defer {
      isApplyingScan = false
      let waiters = scanWaiters
      scanWaiters = []
      for waiter in waiters { waiter.resume() }
    }
    try await applyScanNow(throwing: throwing)
  }

  /// Stops a scan that is no longer wanted or no longer the right kind (monitor or
  /// discovery, patterns), then starts the wanted one.
  private func applyScanNow(throwing: Bool) async throws {
    if let active = activeScan, problem() != nil || active != wantedScan { await stopActiveScan() }
    guard let plan = wantedScan, activeScan == nil else { return }
    if let problem = problem() {
      if throwing { throw problem }
      return
    }
    let adapter = chosen!
    do {
      switch plan {
      case .monitor(let patterns):
        if exportedMonitor != patterns {
          if exportedMonitor != nil { await connection.unexport(at: Self.monitorPath) }
          exportedMonitor = nil
          try await connection.export(
            MonitorObject.interface(
              patterns, onRelease: { [weak self] in await self?.monitorReleased() },
              onDeviceFound: { [weak self] in await self?.monitorFound($0) },
              onDeviceLost: { [weak self] in await self?.monitorLost($0) }),
            at: Self.monitorPath)
          exportedMonitor = patterns
        }
        _ = try await bluez(
          adapter, "org.bluez.AdvertisementMonitorManager1", "RegisterMonitor",
          [.objectPath(Self.advertRoot)])
      case .discovery:
        _ = try await bluez(
          adapter, "org.bluez.Adapter1", "SetDiscoveryFilter",
          [.vardict(["Transport": .string("le"), "DuplicateData": .boolean(true)])])
        do {
          _ = try await bluez(adapter, "org.bluez.Adapter1", "StartDiscovery", [])
        } catch  where error.name == .bluezInProgress {
          // Our session is already running (BlueZ counts sessions per client).
        }
      }
      activeScan = plan
      lastReport = .now
      logger.debug("bluez \(name): scanning with \(plan)")
    } catch {
      await noteAccess(error)
      logger.warning("bluez \(name): cannot scan: \(error)")
      if throwing { throw BlueZMediumError.bluez(error) }
    }
  }

  /// A pattern monitor found a device: it is present until DeviceLost, even when bluetoothd
  /// sends no property change for adverts that repeat themselves (a still beacon).
  private func monitorFound(_ path: DBusObjectPath) {
    monitorPresent.insert(path)
    guard wantBeacons != nil, case .monitor = activeScan, let device = devices[path] else { return }
    reportBeacons(device, path)
  }

  private func monitorLost(_ path: DBusObjectPath) { monitorPresent.remove(path) }

  /// Reports the beacons of the devices a monitor holds present (every second; see
  /// ``monitorFound(_:)``), as long as their data was reported within the last 5 minutes.
  private func reportPresentBeacons() {
    guard wantBeacons != nil, case .monitor = activeScan else { return }
    for path in monitorPresent {
      guard let device = devices[path], ContinuousClock.now - device.lastData < .seconds(300)
      else { continue }
      reportBeacons(device, path)
    }
  }

  private func monitorReleased() async {
    guard case .monitor = activeScan else { return }
    logger.debug("bluez \(name): BlueZ released our monitor")
    activeScan = nil
    try? await Task.sleep(for: configuration.retryDelay)
    try? await applyScan(throwing: false)
  }

  /// Calls a BlueZ method, retrying `NotReady` (and `InProgress`, except for StartDiscovery)
  /// with a doubling delay.
  private func bluez(
    _ path: DBusObjectPath, _ interface: String, _ member: String, _ arguments: [DBusValue]
  ) async throws(DBusError) -> [DBusValue] {
    var delay = configuration.retryDelay
    var attempt = 0
    while true {
      do {
        return try await connection.call(
          destination: Self.service, path: path, interface: interface, member: member, arguments,
          timeout: configuration.callTimeout)
      } catch {
        let retriable =
          error.name == .bluezNotReady
          || (error.name == .bluezInProgress && member != "StartDiscovery")
        guard retriable, attempt < configuration.retries, !isShutDown else { throw error }
        attempt += 1
        logger.debug("bluez \(name): \(member) answered \(error.name); retry in \(delay)")
        try? await Task.sleep(for: delay)
        delay = min(delay * 2, .seconds(2))
      }
    }
  }

  private func noteAccess(_ error: DBusError) async {
    guard error.name == .accessDenied, !accessDenied else { return }
    accessDenied = true
    advert = nil
    activeScan = nil
    updateStatus()
  }

  // MARK: Events from BlueZ

  private func released(_ path: DBusObjectPath) async {
    guard advert?.path == path else { return }
    logger.debug("bluez \(name): BlueZ released our advert")
    advert = nil
    await connection.unexport(at: path)
    try? await Task.sleep(for: configuration.retryDelay)
    try? await applyAdvert(throwing: false)
  }

  private func ownerChanged(to owner: String) async {
    if owner.isEmpty {
      logger.info("bluez: bluetoothd left the bus")
      bluezPresent = false
      adapters = [:]
      devices = [:]
      activeScan = nil
      if let current = advert {
        advert = nil
        await connection.unexport(at: current.path)
      }
      updateStatus()
    } else {
      logger.info("bluez: bluetoothd is back as \(owner)")
      accessDenied = false
      await loadObjects()
    }
  }

  private func handle(_ signal: DBusMessage) async {
    guard let member = signal.member else { return }
    switch (signal.interface, member) {
    case ("org.freedesktop.DBus.Properties", "PropertiesChanged"):
      guard let path = signal.path, let body = try? signal.arguments("sa{sv}as"),
        let interface = body[0].string, let changed = body[1].stringDictionary
      else { return }
      switch interface {
      case "org.bluez.Device1": deviceChanged(path, changed)
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
      if names.contains("org.bluez.Device1") { devices[path] = nil }
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
          advert = nil
          activeScan = nil
          choose()
        }
        await reconcile()
      }
    default:
      break
    }
  }

  private func adapterChanged(
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
        if !powered {
          advert = nil
          activeScan = nil
        }
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
    }
  }

  /// A device's properties changed: remember them, and when they carry an advertising report,
  /// report a sighting of its token frame (never our own token) while scanning for tokens,
  /// and a beacon sighting of each beacon frame while scanning for beacons.
  private func deviceChanged(_ path: DBusObjectPath, _ changed: [String: DBusValue]) {
    var device = devices[path] ?? DeviceState()
    let report = device.apply(changed)
    devices[path] = device
    guard report, let chosen, device.adapter == chosen || path.isDescendant(of: chosen) else {
      return
    }
    lastReport = .now
    guard activeScan != nil else { return }
    if wantBeacons != nil { reportBeacons(device, path) }
    guard wantScanning else { return }
    let frame = device.frame
    if configuration.reportsAllAdvertisements {
      advertisements.yield(
        BlueZAdvertisement(
          address: device.address ?? path.rawValue, rssi: device.rssi.map(Int.init),
          txPower: device.txPower.map(Int.init), serviceData: device.serviceData,
          manufacturerData: device.manufacturerData, token: frame?.token))
    }
    guard let frame, frame.token != advert?.token,
      frame.token != wantedToken
    else { return }
    sightings.yield(
      Sighting(
        token: frame.token, medium: .ble, rssi: device.rssi.map(Double.init),
        txPower: Int(frame.txPower)))
  }

  /// One beacon sighting for each beacon frame of the device's last data; malformed frames
  /// are skipped (logged at debug).
  private func reportBeacons(_ device: DeviceState, _ path: DBusObjectPath) {
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

  /// Restarts a scan that has heard nothing for the watchdog period.
  private func checkWatchdog() async {
    if activeScan == nil, wantedScan != nil, problem() == nil {
      // A start (or a plan change's restart) failed earlier: try again.
      try? await applyScan(throwing: false)
      return
    }
    guard activeScan != nil, problem() == nil,
      ContinuousClock.now - lastReport > configuration.scanWatchdog
    else { return }
    logger.info(
      "bluez \(name): no advertising report for \(configuration.scanWatchdog); restarting the scan")
    await stopActiveScan()
    try? await applyScan(throwing: false)
  }

  // MARK: Status for the CLI

  /// The adapters BlueZ has, for `nearby ble status`.
  func adapterList() -> [AdapterState] { adapters.values.sorted { $0.path < $1.path } }
  var chosenAdapter: DBusObjectPath? { chosen }
  var currentStatus: MediumStatus? { status }
}

/// How the engine scans at BlueZ.
enum ScanPlan: Sendable, Hashable, CustomStringConvertible {
  /// `Adapter1.StartDiscovery` with the LE, duplicate-data filter (active scanning).
  case discovery
  /// An "or_patterns" `AdvertisementMonitor1` (passive scanning) with these patterns.
  case monitor(MonitorPatterns)

  var description: String {
    switch self {
    case .discovery: "discovery"
    case .monitor(let patterns): "a pattern monitor (\(patterns.patterns.count) patterns)"
    }
  }
}

/// What the manager asked of beacon scanning.
struct BeaconWish: Sendable, Hashable {
  /// Passive scanning (a pattern monitor) is asked for where the adapter offers it.
  var lowPower: Bool
}
