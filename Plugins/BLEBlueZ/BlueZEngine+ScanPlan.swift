import Core
import DBus
import Logging
import Strategy
import Tokens

/// Scanning: which plan (pattern monitor or discovery) the wishes need, applying it one change
/// at a time, what a monitor reports, and the watchdog that restarts a silent scan.
extension BlueZEngine {
  static var monitorPath: DBusObjectPath { try! advertRoot.appending("monitor0") }

  /// How BlueZ should scan for the wishes now: `nil` when nothing is wanted. A pattern monitor
  /// where the adapter offers "or_patterns" monitors and every wish allows passive scanning
  /// (token scanning always does, beacon scanning when low power is asked); else discovery.
  /// Always discovery when every advertisement is to be reported
  /// (``BlueZConfiguration/reportsAllAdvertisements``, `nearby ble scan`): a monitor only
  /// hears what its patterns match. Real bluetoothd (5.66, `--experimental`) offers
  /// "or_patterns" monitors, so without this `nearby ble scan` heard only Nearby tokens there
  /// (seen in the BlueZ VM, docs/bluez-vm-findings.md).
  var wantedScan: ScanPlan? {
    guard wantScanning || wantBeacons != nil else { return nil }
    guard let chosen, adapters[chosen]?.canMonitor == true, wantBeacons?.lowPower ?? true,
      !configuration.reportsAllAdvertisements
    else {
      return .discovery
    }
    var patterns: MonitorPatterns = []
    if wantScanning { patterns.insert(.tokens) }
    if wantBeacons != nil { patterns.insert(.beacons) }
    return .monitor(patterns)
  }

  /// Ends our scan at BlueZ: unregisters the monitor or stops discovery.
  func stopActiveScan() async {
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
  func applyScan(throwing: Bool) async throws {
    await lockScan()
    defer { unlockScan() }
    try await applyScanNow(throwing: throwing)
  }

  /// Waits until no other scan change runs, then marks one as running: every change of our
  /// scan at BlueZ happens between this and ``unlockScan()``.
  func lockScan() async {
    while isApplyingScan {
      await withCheckedContinuation { scanWaiters.append($0) }
    }
    isApplyingScan = true
  }

  /// Ends the scan change that ``lockScan()`` began and wakes the ones waiting.
  func unlockScan() {
    isApplyingScan = false
    let waiters = scanWaiters
    scanWaiters = []
    for waiter in waiters { waiter.resume() }
  }

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
  func monitorFound(_ path: DBusObjectPath) {
    monitorPresent.insert(path)
    guard wantBeacons != nil, case .monitor = activeScan, let device = devices[path] else { return }
    reportBeacons(device, path)
  }

  func monitorLost(_ path: DBusObjectPath) { monitorPresent.remove(path) }

  /// Reports the beacons of the devices a monitor holds present (every second; see
  /// ``monitorFound(_:)``), as long as their data was reported within the last 5 minutes.
  func reportPresentBeacons() {
    guard wantBeacons != nil, case .monitor = activeScan else { return }
    for path in monitorPresent {
      guard let device = devices[path], ContinuousClock.now - device.lastData < .seconds(300)
      else { continue }
      reportBeacons(device, path)
    }
  }

  func monitorReleased() async {
    guard case .monitor = activeScan else { return }
    logger.debug("bluez \(name): BlueZ released our monitor")
    activeScan = nil
    try? await Task.sleep(for: configuration.retryDelay)
    try? await applyScan(throwing: false)
  }

  /// Restarts a scan that has heard nothing for the watchdog period.
  func checkWatchdog() async {
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
