import Core
import DBus
import Logging
import Strategy
import Tokens

/// Scanning: which plan (pattern monitor or discovery) the wishes need, applying it one change
/// at a time, what a monitor reports, and the watchdog that restarts a silent scan.
extension BlueZEngine {
  /// How BlueZ should scan for the wishes now: `nil` when nothing is wanted. A pattern monitor
  /// where the adapter offers "or_patterns" monitors and every wish allows passive scanning
  /// (token scanning always does, beacon scanning when low power is asked); else discovery,
  /// with the same pattern monitor beside it where the adapter offers monitors (with one, the
  /// kernel passes bluetoothd the reports it drops at the start of each discovery cycle:
  /// docs/bluez-vm-findings.md item G). Always discovery alone when every advertisement is to
  /// be reported (``BlueZConfiguration/reportsAllAdvertisements``, `nearby ble scan`): a
  /// monitor only hears what its patterns match. Real bluetoothd (5.66, `--experimental`)
  /// offers "or_patterns" monitors, so without this `nearby ble scan` heard only Nearby tokens
  /// there (seen in the BlueZ VM, docs/bluez-vm-findings.md). Discovery alone, too, while the
  /// adapter refuses monitors (``monitorsRefused``, findings item L).
  var wantedScan: ScanPlan? {
    guard wantScanning || wantBeacons != nil else { return nil }
    var patterns: MonitorPatterns = []
    if wantScanning { patterns.insert(.tokens) }
    if wantBeacons != nil { patterns.insert(.beacons) }
    guard let chosen, adapters[chosen]?.canMonitor == true,
      !configuration.reportsAllAdvertisements, !monitorsRefused
    else {
      return .discovery(beside: nil)
    }
    guard wantBeacons?.lowPower ?? true else { return .discovery(beside: patterns) }
    return .monitor(patterns)
  }

  /// Ends our scan at BlueZ: unregisters the monitor or stops discovery.
  func stopActiveScan() async {
    let active = activeScan
    activeScan = nil
    presence.scanStopped()
    guard problem() == nil, let chosen, let active else { return }
    if case .discovery = active {
      _ = try? await bluez(chosen, "org.bluez.Adapter1", "StopDiscovery", [])
    }
    if active.monitorPatterns != nil { await unregisterMonitor(on: chosen) }
  }

  /// Makes BlueZ's scan match ``wantedScan``, one change at a time: token and beacon wishes
  /// arrive from different tasks, and two changes interleaving across their awaits would
  /// register a monitor twice or record a plan BlueZ does not have.
  func applyScan(throwing: Bool) async throws {
    await lockScan()
    defer { unlockScan() }
    try await applyScanNow(throwing: throwing)
  }

  /// Waits until no other scan change runs, then marks one as running: every change of our
  /// scan at BlueZ happens between this and ``unlockScan()``.
  func lockScan() async { await lock(.scan) }

  /// Ends the scan change that ``lockScan()`` began and wakes the ones waiting.
  func unlockScan() { unlock(.scan) }

  /// Stops a scan that is no longer wanted or no longer the right kind (monitor or
  /// discovery, patterns), then starts the wanted one.
  func applyScanNow(throwing: Bool) async throws {
    if let active = activeScan, problem() != nil || active != wantedScan { await stopActiveScan() }
    guard let plan = wantedScan, activeScan == nil else { return }
    if let problem = problem() {
      if throwing { throw problem }
      return
    }
    let adapter = chosen!
    do {
      if let patterns = plan.monitorPatterns { try await registerMonitor(patterns, on: adapter) }
      if case .discovery = plan {
        try await startDiscovery(adapter, besideMonitor: plan.monitorPatterns != nil)
      }
      activeScan = plan
      lastReport = .now
      logger.debug("bluez \(name): scanning with \(plan)")
      noteSharedAdvertising()
    } catch {
      await noteAccess(error)
      logger.warning("bluez \(name): cannot scan: \(error)")
      if throwing { throw BlueZMediumError.bluez(error) }
    }
  }

  /// Starts our discovery session (LE, duplicate data) on the adapter; when that fails, also
  /// unregisters the monitor the plan registered beside it.
  func startDiscovery(_ adapter: DBusObjectPath, besideMonitor: Bool) async throws(DBusError) {
    do {
      _ = try await bluez(
        adapter, "org.bluez.Adapter1", "SetDiscoveryFilter",
        [.vardict(["Transport": .string("le"), "DuplicateData": .boolean(true)])])
      do {
        _ = try await bluez(adapter, "org.bluez.Adapter1", "StartDiscovery", [])
      } catch  where error.name == .bluezInProgress {
        // Our session is already running (BlueZ counts sessions per client).
      }
    } catch {
      if besideMonitor { await unregisterMonitor(on: adapter) }
      throw error
    }
  }

  /// Restarts a scan that has shown no life for the watchdog period
  /// (``BlueZConfiguration/scanWatchdog``). Life is an advertising report, or a device held
  /// present (``presentDevices()``, checked every second by ``presenceTick()``): bluetoothd
  /// is silent about adverts that repeat themselves unchanged, so a healthy scan among still
  /// devices can go without a report for ever. A truly stuck scan still gets restarted: its
  /// controller hears nothing, so bluetoothd removes the devices once unheard for its
  /// `TemporaryTimeout` (30 s by default; under a monitor presence ends `monitorLostAfter`,
  /// 10 s, after the last report, the monitor's restarts bringing nothing) and the
  /// watchdog fires `scanWatchdog` later; devices bluetoothd keeps for good (paired, bonded,
  /// trusted, connected) count only for 30 s after their last report.
  func checkWatchdog() async {
    if activeScan != wantedScan, problem() == nil {
      // A start (or a plan change's restart) failed earlier, or the plan changed with time
      // (monitors set aside after refusals, then tried again): apply it.
      try? await applyScan(throwing: false)
      return
    }
    guard activeScan != nil, problem() == nil,
      ContinuousClock.now - lastReport > configuration.scanWatchdog, presentDevices().isEmpty
    else { return }
    logger.info(
      "bluez \(name): no advertising report nor present device for \(configuration.scanWatchdog); restarting the scan"
    )
    watchdogRestarts += 1
    await stopActiveScan()
    try? await applyScan(throwing: false)
  }
}

/// How the engine scans at BlueZ.
enum ScanPlan: Sendable, Hashable, CustomStringConvertible {
  /// `Adapter1.StartDiscovery` with the LE, duplicate-data filter (active scanning), with an
  /// "or_patterns" `AdvertisementMonitor1` with these patterns beside it where the adapter
  /// offers monitors (see ``BlueZEngine/wantedScan``).
  case discovery(beside: MonitorPatterns?)
  /// An "or_patterns" `AdvertisementMonitor1` (passive scanning) with these patterns.
  case monitor(MonitorPatterns)

  /// The patterns of the monitor the plan registers, if any.
  var monitorPatterns: MonitorPatterns? {
    switch self {
    case .discovery(let beside): beside
    case .monitor(let patterns): patterns
    }
  }

  var description: String {
    switch self {
    case .discovery(nil): "discovery"
    case .discovery(let beside?):
      "discovery with a pattern monitor (\(beside.patterns.count) patterns)"
    case .monitor(let patterns): "a pattern monitor (\(patterns.patterns.count) patterns)"
    }
  }
}

/// What the manager asked of beacon scanning.
struct BeaconWish: Sendable, Hashable {
  /// Passive scanning (a pattern monitor) is asked for where the adapter offers it.
  var lowPower: Bool
}
