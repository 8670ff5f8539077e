import Core
import DBus
import Logging
import Strategy
import Tokens
import BeaconFrames

/// The BlueZ medium's state and its conversation with bluetoothd. An actor: BlueZ's signals
/// about adapters, the manager's requests, `Release` calls and the watchdog all arrive here.
/// Devices' advertising reports do not: ``reporter`` turns them into sightings on the D-Bus
/// connection's dispatch thread, from the device cache it keeps behind a lock (see
/// ``DeviceReports``); the engine tells it what reports depend on as it changes.
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
  /// ``BlueZConfiguration/clock``: the instant of every decision, and every wait.
  let clock: NearbyClock
  let connection: DBusConnection
  let logger: Logger
  let sightings: AsyncStream<Sighting>.Continuation
  let statuses: AsyncStream<MediumStatus>.Continuation
  let advertisements: AsyncStream<BlueZAdvertisement>.Continuation
  let beaconSightings: AsyncStream<BeaconSighting>.Continuation
  /// The device cache, presence, and the reports of devices, behind a lock (see
  /// BlueZEngine+Signals.swift). The properties below that reports depend on tell it each
  /// change (their `didSet`).
  let reporter: DeviceReporter

  var adapters: [DBusObjectPath: AdapterState] = [:] {
    didSet {
      let paths = Set(adapters.keys)
      guard paths != Set(oldValue.keys) else { return }
      reporter.withState { $0.scanning.adapters = paths }
    }
  }
  var chosen: DBusObjectPath? {
    didSet {
      let chosen = chosen
      reporter.withState { $0.scanning.adapter = chosen }
    }
  }
  var daemon = ReconcileStateMachine.Facts.Daemon.absent
  /// The problem, the status told, the advert's steps and the retries of failed calls (see
  /// BlueZEngine+Reconcile.swift).
  var reconciler: ReconcileStateMachine

  var wantedToken: Token? {
    didSet {
      let wanted = wantedToken
      reporter.withState { $0.scanning.wanted = wanted }
    }
  }
  /// The scanning wishes, the plan they need and the watchdog (see BlueZEngine+ScanPlan.swift).
  var scanPlan: ScanPlanStateMachine {
    didSet {
      let (tokens, beacons) = (scanPlan.wantsTokens, scanPlan.wantsBeacons != nil)
      guard tokens != oldValue.wantsTokens || beacons != (oldValue.wantsBeacons != nil) else {
        return
      }
      reporter.withState {
        $0.scanning.tokens = tokens
        $0.scanning.beacons = beacons
      }
    }
  }
  /// The registered advert: its object path and the token it carries.
  var advert: (path: DBusObjectPath, token: Token)? {
    didSet {
      let token = advert?.token
      reporter.withState { $0.scanning.advertised = token }
    }
  }
  var advertCounter = 0
  /// Our scan at BlueZ: a discovery session or a registered monitor, `nil` when none.
  var activeScan: ScanPlan? {
    didSet {
      let scan = activeScan
      reporter.withState { $0.scanning.scan = scan }
    }
  }
  /// Where our monitor object is exported (a new path for each registration), `nil` when none
  /// is (see BlueZEngine+Monitor.swift).
  var exportedMonitorPath: DBusObjectPath?
  /// The registration our exported monitor belongs to.
  var monitorGeneration = -1
  /// Refusals of our monitor by the adapter, and what they lead to (BlueZEngine+Monitor.swift).
  var monitorRefusal: MonitorRefusalStateMachine
  /// The changes running (of our scan, of our advert), and the ones waiting for each (see
  /// BlueZEngine+Gates.swift).
  var busyGates: Set<Gate> = []
  var gateWaiters: [Gate: [CheckedContinuation<Void, Never>]] = [:]
  /// Which devices are held present although bluetoothd is silent about them, and when to
  /// restart the monitor for silent ones (see BlueZEngine+Presence.swift): kept by
  /// ``reporter``, which feeds it the device events; a copy, for tests.
  var presence: PresenceStateMachine { reporter.withState { $0.presence } }
  /// The device cache: what each `Device1` object last said, kept by ``reporter``. The
  /// engine's own code changes it under the reporter's lock; the setter is for tests.
  var devices: [DBusObjectPath: DeviceState] {
    get { reporter.withState { $0.devices } }
    set { reporter.withState { $0.devices = newValue } }
  }
  /// Whether we warned that the adapter carries others' adverts while we scan (see
  /// ``noteSharedAdvertising()``).
  var warnedSharedAdvertising = false
  /// The engine's one task and its task group, where all its work runs; ended and awaited by
  /// ``shutdown()``, ended when the engine is released (see BlueZEngine+Tasks.swift).
  nonisolated let work = WorkGroup()

  init(
    configuration: BlueZConfiguration, connection: DBusConnection, logger: Logger,
    sightings: AsyncStream<Sighting>.Continuation, statuses: AsyncStream<MediumStatus>.Continuation,
    advertisements: AsyncStream<BlueZAdvertisement>.Continuation,
    beaconSightings: AsyncStream<BeaconSighting>.Continuation
  ) {
    self.advertisements = advertisements
    self.beaconSightings = beaconSightings
    self.configuration = configuration
    let clock = NearbyClock(configuration.clock)
    self.clock = clock
    self.monitorRefusal = MonitorRefusalStateMachine(
      configuration: .init(
        fallback: configuration.monitorRefusalFallback, retryDelay: configuration.retryDelay))
    self.reconciler = ReconcileStateMachine(
      configuration: .init(
        adapter: configuration.adapter, retries: configuration.retries,
        retryDelay: configuration.retryDelay))
    self.scanPlan = ScanPlanStateMachine(
      configuration: .init(
        scanWatchdog: configuration.scanWatchdog,
        reportsAllAdvertisements: configuration.reportsAllAdvertisements),
      at: clock.now)
    self.reporter = DeviceReporter(
      DeviceReports(
        presence: .init(
          monitorLostAfter: configuration.monitorLostAfter,
          temporaryTimeout: configuration.temporaryTimeout),
        reportsAllAdvertisements: configuration.reportsAllAdvertisements),
      sightings: sightings, advertisements: advertisements, beaconSightings: beaconSightings,
      clock: clock, logger: logger)
    self.connection = connection
    self.logger = logger
    self.sightings = sightings
    self.statuses = statuses
  }

  deinit { work.end() }

  var name: String { adapters[chosen ?? .root]?.name ?? configuration.adapter ?? "no adapter" }

  // MARK: Startup

  /// Subscribes to BlueZ's signals first, then reads its objects, as careful clients do (no
  /// change can fall between the two). The signals go to ``reporter`` on the D-Bus
  /// connection's dispatch thread; those it passes on (about adapters, and any behind one)
  /// come here, in order, through a stream that the engine's loop reads
  /// (BlueZEngine+Loop.swift).
  func start() async throws(DBusError) {
    let (signals, passOn) = AsyncStream.makeStream(
      of: DBusMessage.self, bufferingPolicy: .bufferingNewest(65_536))
    let reporter = self.reporter
    try await connection.handleSignals(
      matching: DBusMatchRule(sender: Self.service), onEnd: { passOn.finish() }
    ) { signal in
      guard !reporter.receive(signal) else { return }
      // Dropped (the engine is 65 536 signals behind) or shut down: one fewer reaches it.
      if case .enqueued = passOn.yield(signal) { return }
      reporter.engineHandled()
    }
    let owners = try await connection.nameOwnerChanges(of: Self.service)
    startLoop(signals: signals, owners: owners)
    await connection.addObjectManager(at: Self.advertRoot)
    await loadObjects()
  }

  /// Reads BlueZ's objects and picks the adapter; sets the status.
  func loadObjects() async {
    adapters = [:]
    reporter.withState { $0.reset() }
    advert = nil
    activeScan = nil
    // A new bluetoothd (or adapter set) has not refused anything yet.
    monitorRefusal.reset()
    do {
      let objects = try await connection.managedObjects(
        of: Self.service, timeout: configuration.callTimeout)
      daemon = .present
      var loaded: [DBusObjectPath: DeviceState] = [:]
      for (path, interfaces) in objects {
        if interfaces["org.bluez.Adapter1"] != nil {
          adapters[path] = AdapterState(path: path, interfaces: interfaces)
        }
        if let properties = interfaces["org.bluez.Device1"] {
          var device = DeviceState(at: clock.now)
          _ = device.apply(properties, at: clock.now)
          loaded[path] = device
        }
      }
      reporter.withState { $0.devices.merge(loaded) { $1 } }
    } catch {
      daemon =
        switch error.name {
        case .accessDenied: .refusedAccess
        case .serviceUnknown, .nameHasNoOwner: .absent
        default: .present
        }
      if daemon == .present {
        logger.warning("cannot read BlueZ's objects: \(error)")
      }
    }
    choose()
    await reconcile()
  }

  /// Picks the configured adapter, else the first powered one, else the first.
  func choose() {
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
      localName: configuration.localName, connectable: configuration.connectable)
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
    scanPlan.startTokens(at: clock.now)
    try await applyScan(throwing: true)
  }

  func stopScanning() async {
    scanPlan.stopTokens()
    try? await applyScan(throwing: false)
  }

  func startBeaconScanning(lowPower: Bool) async throws {
    scanPlan.startBeacons(lowPower: lowPower, at: clock.now)
    try await applyScan(throwing: true)
  }

  func stopBeaconScanning() async {
    scanPlan.stopBeacons()
    try? await applyScan(throwing: false)
  }

  /// Withdraws the advert and the scan, ends the engine's tasks, finishes the streams and
  /// closes the connection. Returns once the engine's tasks ended, except when called from
  /// one of them (it cannot await itself): then it only cancels them, and a later call from
  /// outside awaits them.
  func shutdown() async {
    guard !isShutDown else {
      await endTasks()
      return
    }
    wantedToken = nil
    scanPlan.stopAll()
    try? await applyAdvert(throwing: false)
    try? await applyScan(throwing: false)
    reconciler.shutDown()
    await endTasks()
    sightings.finish()
    statuses.finish()
    advertisements.finish()
    beaconSightings.finish()
    connection.close()
  }

  // MARK: Status for the CLI

  /// The adapters BlueZ has, for `nearby ble status`.
  func adapterList() -> [AdapterState] { adapters.values.sorted { $0.path < $1.path } }
  var chosenAdapter: DBusObjectPath? { chosen }
  var currentStatus: MediumStatus? { status }
}
