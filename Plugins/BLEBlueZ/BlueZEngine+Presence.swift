import Core
import DBus
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
/// - under a pattern monitor: the devices between `DeviceFound` and `DeviceLost` (bluetoothd
///   calls DeviceLost after the monitor's `RSSILowTimeout`, 10 s without an advert), whose
///   data was reported within the last 5 minutes;
/// - under discovery: the devices bluetoothd keeps with an advertising report (their object
///   exists and their RSSI, even "unknown", is valid) on our adapter, and for
///   ``rediscoveryGrace`` after bluetoothd's timer removed one of them (no RSSI invalidated,
///   at least 3/4 of ``BlueZConfiguration/temporaryTimeout`` after its last report; a sooner
///   removal is the device going, or a client's `RemoveDevice`). bluetoothd removes a
///   temporary device once it has got no report of it for its `TemporaryTimeout` (main.conf,
///   30 s by default), and it invalidates the RSSI and removes
///   the devices when the adapter's last discovery session stops (item 11): so a device
///   object with an RSSI means "reported within the last 30 s". A still device may get no
///   repeat through to bluetoothd at all (in the VM the kernel passed one report per device
///   object): bluetoothd then removes it 30 s after creating it although it still advertises,
///   and creates it again at its next report, one kernel discovery cycle (about 10 s) later;
///   the grace bridges that gap. Devices bluetoothd keeps for good (paired, bonded, trusted,
///   connected) are held present only for 30 s after their last report.
///
/// Every second the medium re-reports what each present device last sent: a token sighting
/// while scanning for tokens (never our own token) and the beacon sightings while scanning for
/// beacons, with the last RSSI. Not the ``BlueZMedium/advertisements`` stream: that one
/// reports what bluetoothd sent. The price: a peer that stops advertising stays present until
/// bluetoothd lets it go (up to 30 s under discovery, 10 s under a monitor), as bluetoothd
/// offers no sooner sign that a device is gone. The scan watchdog counts present devices as
/// life (see ``checkWatchdog()``).
extension BlueZEngine {
  /// A device held present: its object path and what the medium knows of it.
  typealias Present = (path: DBusObjectPath, device: DeviceState)

  /// How long a device a monitor holds present stays so without any report.
  static let monitorPresenceLimit: Duration = .seconds(300)
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
    guard case .discovery = activeScan, device.heard, !device.isKept,
      isOnChosenAdapter(device, path), silentFor >= configuration.temporaryTimeout * 0.75
    else { return }
    vanished[path] = (device, .now)
  }

  /// A pattern monitor found a device: it is present until DeviceLost, even when bluetoothd
  /// sends no property change for adverts that repeat themselves (a still beacon).
  func monitorFound(_ path: DBusObjectPath) {
    monitorPresent.insert(path)
    guard case .monitor = activeScan, let device = devices[path] else { return }
    if wantBeacons != nil { reportBeacons(device, path) }
    if wantScanning { reportToken(device) }
  }

  func monitorLost(_ path: DBusObjectPath) { monitorPresent.remove(path) }

  /// The devices held present now, by the rule of the active scan (see the extension's
  /// documentation); none without a scan.
  func presentDevices() -> [Present] {
    let now = ContinuousClock.now
    switch activeScan {
    case nil:
      return []
    case .monitor:
      return monitorPresent.sorted().compactMap { path -> Present? in
        guard let device = devices[path], now - device.lastData < Self.monitorPresenceLimit
        else { return nil }
        return (path, device)
      }
    case .discovery:
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
