import Core
import DBus
import Logging
import Strategy
import Tokens

/// Scanning: applying the plan the wishes need one change at a time, and the watchdog that
/// restarts a silent scan. What the plan is, the steps towards it and when the watchdog acts
/// are decided by ``ScanPlanStateMachine`` (``scanPlan``); this extension performs them.
///
/// The plan is a pattern monitor where the adapter offers "or_patterns" monitors and every
/// wish allows passive scanning, else discovery, with the same pattern monitor beside it where
/// the adapter offers monitors (with one, the kernel passes bluetoothd the reports it drops at
/// the start of each discovery cycle: docs/bluez-vm-findings.md item G). Always discovery alone
/// when every advertisement is to be reported (``BlueZConfiguration/reportsAllAdvertisements``,
/// `nearby ble scan`): a monitor only hears what its patterns match. Real bluetoothd (5.66,
/// `--experimental`) offers "or_patterns" monitors, so without this `nearby ble scan` heard only
/// Nearby tokens there (seen in the BlueZ VM, docs/bluez-vm-findings.md). Discovery alone, too,
/// while the adapter refuses monitors (``monitorsRefused``, findings item L).
extension BlueZEngine {
  /// Whether token scanning is wished.
  var wantScanning: Bool { scanPlan.wantsTokens }
  /// The beacon-scanning wish: `nil` when off.
  var wantBeacons: BeaconWish? { scanPlan.wantsBeacons }
  /// How many times the watchdog restarted the scan (for tests).
  var watchdogRestarts: Int { scanPlan.watchdogRestarts }

  /// What the chosen adapter offers for scanning, `nil` when it cannot be used now
  /// (``problem()``).
  var scanAdapter: ScanPlanStateMachine.Adapter? {
    guard problem() == nil, let chosen, let adapter = adapters[chosen] else { return nil }
    return .init(
      monitors: !adapter.canMonitor ? .unsupported : monitorsRefused ? .refused : .offered)
  }

  /// How BlueZ should scan for the wishes now: `nil` when nothing is wanted (see the
  /// extension's documentation).
  var wantedScan: ScanPlan? { scanPlan.wanted(on: scanAdapter) }

  /// Ends our scan at BlueZ: unregisters the monitor or stops discovery.
  func stopActiveScan() async {
    let active = activeScan
    activeScan = nil
    reporter.withState { $0.presence.scanStopped() }
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
  /// discovery, patterns), then starts the wanted one (the steps ``scanPlan`` gives).
  func applyScanNow(throwing: Bool) async throws {
    if case .stop? = scanPlan.next(active: activeScan, on: scanAdapter) { await stopActiveScan() }
    switch scanPlan.next(active: activeScan, on: scanAdapter) {
    case .cannotStart?:
      if throwing, let problem = problem() { throw problem }
    case .start(let plan)?:
      let adapter = chosen!
      do {
        if let patterns = plan.monitorPatterns { try await registerMonitor(patterns, on: adapter) }
        if case .discovery = plan {
          try await startDiscovery(adapter, besideMonitor: plan.monitorPatterns != nil)
        }
        activeScan = plan
        scanPlan.started(plan, at: clock.now)
        logger.debug("bluez \(name): scanning with \(plan)")
        noteSharedAdvertising()
      } catch {
        await noteAccess(error)
        logger.warning("bluez \(name): cannot scan: \(error)")
        if throwing { throw BlueZMediumError.bluez(error) }
      }
    case .stop?, nil:
      return
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
    // The advertising reports' life, which the reporter keeps (BlueZEngine+Signals.swift).
    if let lastReport = reporter.withState({ $0.lastReport }) { scanPlan.life(at: lastReport) }
    let anyPresent = !presentDevices().isEmpty
    switch scanPlan.watchdog(
      at: clock.now, active: activeScan, on: scanAdapter, anyPresent: anyPresent)
    {
    case .apply?:
      // A start (or a plan change's restart) failed earlier, or the plan changed with time
      // (monitors set aside after refusals, then tried again): apply it.
      try? await applyScan(throwing: false)
    case .restart?:
      logger.info(
        "bluez \(name): no advertising report nor present device for \(configuration.scanWatchdog); restarting the scan"
      )
      await stopActiveScan()
      try? await applyScan(throwing: false)
    case nil:
      return
    }
  }
}

/// How the engine scans at BlueZ.
enum ScanPlan: Sendable, Hashable, CustomStringConvertible {
  /// `Adapter1.StartDiscovery` with the LE, duplicate-data filter (active scanning), with an
  /// "or_patterns" `AdvertisementMonitor1` with these patterns beside it where the adapter
  /// offers monitors (see ``ScanPlanStateMachine/wanted(on:)``).
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
