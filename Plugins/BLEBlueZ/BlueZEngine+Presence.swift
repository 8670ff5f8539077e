import Core
import DBus
import Logging
import Strategy
import Tokens

/// Presence: the devices the medium holds present although bluetoothd is silent about them,
/// and their periodic re-reports.
///
/// bluetoothd sends `PropertiesChanged` only for a property whose value changed, even with
/// `DuplicateData` (docs/bluez-vm-findings.md item 10): an advert that repeats itself with the
/// same RSSI and data (a still beacon or peer; every advert in the VM's emulated air, whose
/// RSSI is always 127) is reported once and then never again. Without more, its sightings
/// stop and the manager loses it (`beaconLostAfter`, the resolver's `lostAfter`, 10 s). So the
/// medium holds present:
/// - under a pattern monitor: the devices the monitor reported (DeviceFound) within the last
///   ``BlueZConfiguration/monitorLostAfter`` (10 s). Our monitor sets no RSSI property, so
///   bluetoothd calls DeviceFound for every matching advertising report, changed or not, and
///   never DeviceLost (item F). Some controllers report an unchanged advert only once per scan
///   start: btvirt's emulated ones always (the VM: one LE Advertising Report when the passive
///   scan starts, then none for as long as it runs, with duplicate filtering off), and real ones
///   under kernels that leave duplicate filtering on for monitors (Linux 5.17 until its 2024
///   stable fixes). So when a present device has been silent for 4/10 of `monitorLostAfter`,
///   the medium restarts its monitor (``refreshMonitorIfSilent()``: at most once per that
///   period): the kernel restarts the passive scan and the controller reports what is still on
///   the air. A device that still advertises is reported again; one that left is not and goes
///   `monitorLostAfter` after its last report. Where every advert is reported (most
///   controllers on current kernels), present devices are never silent that long and the
///   monitor is never restarted;
/// - under discovery with our monitor beside it (where the adapter offers monitors): the
///   devices reported within the last ``reportedDiscoveryHold`` (25 s), by a `PropertiesChanged`
///   with their data (`DuplicateData` makes bluetoothd send one for every report) or the
///   monitor's DeviceFound. With a monitor registered the kernel passes bluetoothd the report
///   of each device at the start of every LE discovery cycle (about 10.5 s), which it drops
///   otherwise (item G): two cycles and a margin. A device that stops is gone 25 s after its
///   last report at most, not 30 s + ``rediscoveryGrace``;
/// - under discovery alone: the devices bluetoothd keeps with an advertising report (their object
///   exists and their RSSI, even "unknown", is valid) on our adapter, and for
///   ``rediscoveryGrace`` after bluetoothd's timer removed one of them (no RSSI invalidated,
///   at least 3/4 of ``BlueZConfiguration/temporaryTimeout`` after its last report; a sooner
///   removal is the device going, or a client's `RemoveDevice`). bluetoothd removes a
///   temporary device once it has got no report of it for its `TemporaryTimeout` (main.conf,
///   30 s by default), and it invalidates the RSSI and removes
///   the devices when the adapter's last discovery session stops (item 11): so a device
///   object with an RSSI means "reported within the last 30 s". A still device may get no
///   repeat through to bluetoothd for a while (in the VM the kernel restarts its LE scan about
///   every 10.5 s, the emulated controller reports the advert once at each start, and the
///   kernel passes on about every other one, item G): bluetoothd then removes it 30 s after
///   its last report although it still advertises, and creates it again at its next report;
///   the grace bridges that gap. Devices bluetoothd keeps for good (paired, bonded, trusted,
///   connected) are held present only for 30 s after their last report.
///
/// Every second the medium re-reports what each present device last sent: a token sighting
/// while scanning for tokens (never our own token) and the beacon sightings while scanning for
/// beacons, with the last RSSI. Not the ``BlueZMedium/advertisements`` stream: that one
/// reports what bluetoothd sent. The price: a peer that stops advertising stays present until
/// its last report is `monitorLostAfter` old under a monitor, or until bluetoothd lets it go
/// under discovery (up to 30 s, and the grace), as bluetoothd offers no sooner sign that a
/// device is gone. The scan watchdog counts present devices as life (see
/// ``checkWatchdog()``).
extension BlueZEngine {
  /// A device held present: its object path and what the medium knows of it.
  typealias Present = (path: DBusObjectPath, device: DeviceState)

  /// Under discovery with our monitor beside it, how long a device stays present after its
  /// last report: two kernel LE discovery cycles (10.24 s, each bringing a report of every
  /// device on the air) and a margin.
  static let reportedDiscoveryHold: Duration = .seconds(25)
  /// How long a device bluetoothd removed during our discovery (its RSSI still valid: not a
  /// discovery stop) stays present: one kernel LE discovery cycle (10.24 s), after which
  /// bluetoothd creates a device that still advertises again, and a margin.
  static let rediscoveryGrace: Duration = .seconds(12)

  /// bluetoothd removed a device: forget it, but when its timer did so while our discovery
  /// held the device present, keep it for ``rediscoveryGrace`` (see the extension's
  /// documentation).
  func deviceRemoved(_ path: DBusObjectPath) {
    guard let device = devices.removeValue(forKey: path) else { return }
    let silentFor = ContinuousClock.now - device.lastData
    guard case .discovery(beside: nil) = activeScan, device.heard, !device.isKept,
      isOnChosenAdapter(device, path), silentFor >= configuration.temporaryTimeout * 0.75
    else { return }
    vanished[path] = (device, .now)
  }

  /// Our pattern monitor reported an advertising report of the device (DeviceFound, for every
  /// matching report: see the extension's documentation): it is present for
  /// ``BlueZConfiguration/monitorLostAfter`` from now. A device that was not present is
  /// reported at once.
  func monitorFound(_ path: DBusObjectPath) {
    let now = ContinuousClock.now
    let wasPresent = monitorHeard[path].map { now - $0 < configuration.monitorLostAfter } ?? false
    monitorHeard[path] = now
    monitorRefusal.reported()  // a monitor that reports works (BlueZEngine+Monitor.swift)
    guard !wasPresent, case .monitor = activeScan, let device = devices[path] else { return }
    if wantBeacons != nil { reportBeacons(device, path) }
    if wantScanning { reportToken(device) }
  }

  /// bluetoothd calls DeviceLost only on monitors with RSSI settings (ours has none); honoured
  /// all the same.
  func monitorLost(_ path: DBusObjectPath) { monitorHeard[path] = nil }

  /// Restarts our monitor when a device it holds present has been silent for 4/10 of
  /// ``BlueZConfiguration/monitorLostAfter``, at most once in that time: the controller then
  /// reports again what is still on the air (see the extension's documentation). Runs every
  /// second, after ``reportPresent()``.
  func refreshMonitorIfSilent() async {
    guard case .monitor = activeScan, problem() == nil else { return }
    let now = ContinuousClock.now
    let lostAfter = configuration.monitorLostAfter
    let refreshAfter = lostAfter * 0.4
    guard now - lastMonitorRefresh >= refreshAfter,
      monitorHeard.values.contains(where: { now - $0 >= refreshAfter && now - $0 < lostAfter })
    else { return }
    await lockScan()
    defer { unlockScan() }
    guard case .monitor = activeScan else { return }
    lastMonitorRefresh = .now
    monitorRefreshes += 1
    logger.debug("bluez \(name): restarting the monitor to hear silent devices again")
    await stopActiveScan()
    try? await applyScanNow(throwing: false)
  }

  /// The devices held present now, by the rule of the active scan (see the extension's
  /// documentation); none without a scan.
  func presentDevices() -> [Present] {
    let now = ContinuousClock.now
    switch activeScan {
    case nil:
      return []
    case .monitor:
      return monitorHeard.filter { now - $0.value < configuration.monitorLostAfter }.keys.sorted()
        .compactMap { path -> Present? in devices[path].map { (path, $0) } }
    case .discovery(beside: _?):
      return devices.sorted { $0.key < $1.key }.compactMap { path, device -> Present? in
        let last = max(device.lastData, monitorHeard[path] ?? device.lastData)
        guard device.heard, isOnChosenAdapter(device, path),
          now - last < Self.reportedDiscoveryHold
        else { return nil }
        return (path, device)
      }
    case .discovery(beside: nil):
      let kept = devices.sorted { $0.key < $1.key }.compactMap { path, device -> Present? in
        guard device.heard, isOnChosenAdapter(device, path),
          !device.isKept || now - device.lastData < configuration.temporaryTimeout
        else { return nil }
        return (path, device)
      }
      let removed = vanished.sorted { $0.key < $1.key }.compactMap { path, entry -> Present? in
        now - entry.at < Self.rediscoveryGrace ? (path, entry.device) : nil
      }
      return kept + removed
    }
  }

  /// Re-reports the devices held present (every second): their token sightings while
  /// scanning for tokens, their beacon sightings while scanning for beacons. A present device
  /// also counts as life for the watchdog.
  func reportPresent() {
    vanished = vanished.filter { ContinuousClock.now - $0.value.at < Self.rediscoveryGrace }
    // Kept as long as either rule may read them.
    let keep = max(configuration.monitorLostAfter, Self.reportedDiscoveryHold)
    monitorHeard = monitorHeard.filter { ContinuousClock.now - $0.value < keep }
    let present = presentDevices()
    guard !present.isEmpty else { return }
    lastReport = .now
    // One sighting a token: a peer's advert can sit on several device objects at once (a new
    // address while the old object is still kept).
    var tokens: Set<Token> = []
    for (path, device) in present {
      if wantBeacons != nil { reportBeacons(device, path) }
      if wantScanning, let token = device.frame?.token, tokens.insert(token).inserted {
        reportToken(device)
      }
    }
  }
}
