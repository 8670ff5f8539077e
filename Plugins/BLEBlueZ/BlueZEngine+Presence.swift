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
///   the medium restarts its monitor (``restartMonitorForSilentDevices()``: at most once per
///   that period): the kernel restarts the passive scan and the controller reports what is still on
///   the air. A device that still advertises is reported again; one that left is not and goes
///   `monitorLostAfter` after its last report. Where every advert is reported (most
///   controllers on current kernels), present devices are never silent that long and the
///   monitor is never restarted;
/// - under discovery with our monitor beside it (where the adapter offers monitors): the
///   devices reported within the last
///   ``PresenceStateMachine/Configuration/reportedDiscoveryHold`` (25 s), by a
///   `PropertiesChanged` with their data (`DuplicateData` makes bluetoothd send one for every report) or the
///   monitor's DeviceFound. With a monitor registered the kernel passes bluetoothd the report
///   of each device at the start of every LE discovery cycle (about 10.5 s), which it drops
///   otherwise (item G): two cycles and a margin. A device that stops is gone 25 s after its
///   last report at most, not 30 s + the grace below;
/// - under discovery alone: the devices bluetoothd keeps with an advertising report (their object
///   exists and their RSSI, even "unknown", is valid) on our adapter, and for
///   ``PresenceStateMachine/Configuration/rediscoveryGrace`` (12 s) after bluetoothd's timer
///   removed one of them (no RSSI invalidated, at least 3/4 of ``BlueZConfiguration/temporaryTimeout`` after its last report; a sooner
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
///
/// The rules are decided by ``PresenceStateMachine`` (``presence``), on instants. It lives
/// in ``reporter``'s state beside the device cache (``DeviceReports``), which feeds it the
/// device events on the D-Bus connection's dispatch thread; this extension feeds it the rest
/// (the monitor's reports, the scan's stops, the time) and performs what it returns: the
/// reports (made by the reporter, under its lock) and the monitor's restarts.
extension BlueZEngine {
  /// bluetoothd removed a device: forget it, but when its timer did so while our discovery
  /// held the device present, ``presence`` keeps it for a grace (see the extension's
  /// documentation).
  func deviceRemoved(_ path: DBusObjectPath) {
    reporter.withState { $0.deviceRemoved(path, at: clock.now) }
  }

  /// Our pattern monitor reported an advertising report of the device (DeviceFound, for every
  /// matching report: see the extension's documentation): it is present for
  /// ``BlueZConfiguration/monitorLostAfter`` from now. A device that was not present is
  /// reported at once.
  func monitorFound(_ path: DBusObjectPath) {
    reporter.monitorFound(path)
    monitorRefusal.reported()  // a monitor that reports works (BlueZEngine+Monitor.swift)
  }

  /// bluetoothd calls DeviceLost only on monitors with RSSI settings (ours has none); honoured
  /// all the same.
  func monitorLost(_ path: DBusObjectPath) { reporter.withState { $0.presence.monitorLost(path) } }

  /// How many times the monitor was restarted for silent devices (for tests).
  var monitorRefreshes: Int { reporter.withState { $0.presence.monitorRefreshes } }

  /// The devices held present now, by the rule of the active scan (see the extension's
  /// documentation); none without a scan.
  func presentDevices() -> [PresenceStateMachine.Present] {
    let now = clock.now
    return reporter.withState { $0.present(at: now) }
  }

  /// The periodic presence check (every second): re-reports the devices held present (the
  /// reporter does, under its lock; a present device also counts as life for the watchdog),
  /// then restarts our monitor when ``presence`` asks, to hear silent devices again.
  func presenceTick() async {
    for action in reporter.tick() {
      switch action {
      case .report:
        scanPlan.life(at: clock.now)
      case .restartMonitor:
        await restartMonitorForSilentDevices()
      }
    }
  }

  /// Restarts our monitor: the controller then reports again what is still on the air (see
  /// the extension's documentation).
  func restartMonitorForSilentDevices() async {
    guard case .monitor = activeScan, problem() == nil else { return }
    await lockScan()
    defer { unlockScan() }
    guard case .monitor = activeScan else { return }
    reporter.withState { $0.presence.monitorRestarted(at: clock.now) }
    logger.debug("bluez \(name): restarting the monitor to hear silent devices again")
    await stopActiveScan()
    try? await applyScanNow(throwing: false)
  }
}
