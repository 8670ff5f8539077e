import Core
import DBus

/// Which devices the medium holds present although bluetoothd is silent about them, apart
/// from D-Bus (BlueZEngine+Presence.swift explains why and performs it): the rule of each
/// scan, the hold of a device bluetoothd removed under discovery, and when to restart a
/// pattern monitor to hear silent devices again. An event and the instant in, the actions
/// out; the machine reads no clock.
///
/// The rules, by the active scan (``ScanPlan``):
/// - **a pattern monitor**: a device is present for ``Configuration/monitorLostAfter`` after
///   the monitor's last DeviceFound for it (``monitorFound(_:device:scan:at:)``), as long as
///   bluetoothd has its object. A device that was not present is reported at once
///   (``Action/report(_:)``). When a present device has been silent for 4/10 of
///   `monitorLostAfter`, ``tick(at:scan:adapter:devices:)`` asks for the monitor to be
///   restarted (``Action/restartMonitor``), at most once in that time after the last restart
///   (``monitorRestarted(at:)``).
/// - **discovery with our monitor beside it**: a device heard on the adapter is present for
///   ``Configuration/reportedDiscoveryHold`` after its last report, a `PropertiesChanged`
///   with its data or the monitor's DeviceFound, whichever came last.
/// - **discovery alone**: a device bluetoothd keeps with an advertising report (heard) on the
///   adapter is present; one it keeps for good (paired, bonded, trusted, connected) only for
///   ``Configuration/temporaryTimeout`` after its last report. A device bluetoothd removed at
///   least 3/4 of `temporaryTimeout` after its last report (its timer, not the device going)
///   stays present for ``Configuration/rediscoveryGrace`` after the removal
///   (``deviceRemoved(_:device:scan:adapter:at:)``), until bluetoothd creates it again
///   (``deviceChanged(_:)``) or the scan stops (``scanStopped()``).
/// - **no scan**: nothing is present.
///
/// A deadline is exclusive: a device last heard at `t` under a monitor is present until just
/// before `t + monitorLostAfter` and no longer at that instant. Monitor reports arriving out
/// of order keep the latest instant.
///
/// Events: ``monitorFound(_:device:scan:at:)``, ``monitorLost(_:)``,
/// ``deviceRemoved(_:device:scan:adapter:at:)``, ``deviceChanged(_:)``, ``scanStopped()``,
/// ``monitorRestarted(at:)``, ``reset()`` and the periodic ``tick(at:scan:adapter:devices:)``
/// (every second); ``present(at:scan:adapter:devices:)`` answers the watchdog.
struct PresenceStateMachine: Sendable {
  struct Configuration: Sendable, Hashable {
    /// Under a monitor, how long a device stays present after the monitor's last report
    /// (``BlueZConfiguration/monitorLostAfter``).
    var monitorLostAfter: Duration = .seconds(10)
    /// bluetoothd's `TemporaryTimeout` (``BlueZConfiguration/temporaryTimeout``).
    var temporaryTimeout: Duration = .seconds(30)
    /// Under discovery with our monitor beside it, how long a device stays present after its
    /// last report: two kernel LE discovery cycles (10.24 s, each bringing a report of every
    /// device on the air) and a margin.
    var reportedDiscoveryHold: Duration = .seconds(25)
    /// How long a device bluetoothd removed during our discovery (its RSSI still valid: not a
    /// discovery stop) stays present: one kernel LE discovery cycle (10.24 s), after which
    /// bluetoothd creates a device that still advertises again, and a margin.
    var rediscoveryGrace: Duration = .seconds(12)

    /// Silence after which a device present under a monitor asks for a monitor restart, and
    /// the least time between two restarts: 4/10 of ``monitorLostAfter``.
    var monitorRefreshAfter: Duration { monitorLostAfter * 0.4 }
    /// Silence after which a removal is bluetoothd's timer: 3/4 of ``temporaryTimeout``.
    var timerRemovalAfter: Duration { temporaryTimeout * 0.75 }
  }

  /// A device held present: its object path and what the medium knows of it.
  struct Present: Equatable, Sendable {
    var path: DBusObjectPath
    var device: DeviceState
  }

  /// What the engine performs.
  enum Action: Equatable, Sendable {
    /// Report these devices' sightings (token and beacon sightings, as wished); a report of
    /// present devices also counts as life for the scan watchdog.
    case report([Present])
    /// Restart the pattern monitor (the controller then reports again what is on the air);
    /// report ``PresenceStateMachine/monitorRestarted(at:)`` once done.
    case restartMonitor
  }

  let configuration: Configuration
  /// When our pattern monitor last reported each device (DeviceFound).
  private(set) var monitorHeard: [DBusObjectPath: NearbyClock.Instant] = [:]
  /// Devices bluetoothd removed while our discovery held them present, and when.
  private(set) var vanished: [DBusObjectPath: (device: DeviceState, at: NearbyClock.Instant)] =
    [:]
  /// When the monitor was last restarted for silent devices, `nil` before the first time.
  private(set) var lastMonitorRefresh: NearbyClock.Instant?
  /// How many times the monitor was restarted for silent devices (for tests).
  private(set) var monitorRefreshes = 0

  init(configuration: Configuration = Configuration()) {
    self.configuration = configuration
  }

  // MARK: Events

  /// Our pattern monitor reported an advertising report of the device (DeviceFound) at `now`:
  /// it is present for `monitorLostAfter` from then. Under a monitor, a known device that was
  /// not present is reported at once.
  mutating func monitorFound(
    _ path: DBusObjectPath, device: DeviceState?, scan: ScanPlan?, at now: NearbyClock.Instant
  ) -> [Action] {
    let last = monitorHeard[path]
    let wasPresent = last.map { now - $0 < configuration.monitorLostAfter } ?? false
    monitorHeard[path] = max(now, last ?? now)
    guard !wasPresent, case .monitor = scan, let device else { return [] }
    return [.report([Present(path: path, device: device)])]
  }

  /// The monitor lost the device (DeviceLost: bluetoothd calls it only on monitors with RSSI
  /// settings, ours has none): no longer present by the monitor's reports.
  mutating func monitorLost(_ path: DBusObjectPath) { monitorHeard[path] = nil }

  /// bluetoothd removed the device's object at `now`: under discovery alone, a device heard on
  /// `adapter`, not kept for good and silent for at least 3/4 of `temporaryTimeout` (its timer
  /// removed it) stays present for `rediscoveryGrace`. Returns whether it is held.
  @discardableResult
  mutating func deviceRemoved(
    _ path: DBusObjectPath, device: DeviceState, scan: ScanPlan?, adapter: DBusObjectPath?,
    at now: NearbyClock.Instant
  ) -> Bool {
    guard case .discovery(beside: nil) = scan, device.heard, !device.isKept,
      device.isOn(adapter: adapter, at: path),
      now - device.lastData >= configuration.timerRemovalAfter
    else { return false }
    vanished[path] = (device, now)
    return true
  }

  /// bluetoothd (again) has an object for the device: it no longer needs holding.
  mutating func deviceChanged(_ path: DBusObjectPath) { vanished[path] = nil }

  /// Our scan stopped: the devices held after their removal are let go.
  mutating func scanStopped() { vanished = [:] }

  /// The monitor was restarted for silent devices at `now`.
  mutating func monitorRestarted(at now: NearbyClock.Instant) {
    lastMonitorRefresh = now
    monitorRefreshes += 1
  }

  /// A new bluetoothd (or none): nothing heard, nothing held.
  mutating func reset() {
    monitorHeard = [:]
    vanished = [:]
  }

  /// The periodic check (every second): forgets what no rule reads any more, reports the
  /// devices present, and asks for a monitor restart when a device present under it has been
  /// silent for 4/10 of `monitorLostAfter` (at most once in that time).
  mutating func tick(
    at now: NearbyClock.Instant, scan: ScanPlan?, adapter: DBusObjectPath?,
    devices: [DBusObjectPath: DeviceState]
  ) -> [Action] {
    vanished = vanished.filter { now - $0.value.at < configuration.rediscoveryGrace }
    // Kept as long as either rule may read them.
    let keep = max(configuration.monitorLostAfter, configuration.reportedDiscoveryHold)
    monitorHeard = monitorHeard.filter { now - $0.value < keep }
    var actions: [Action] = []
    let present = present(at: now, scan: scan, adapter: adapter, devices: devices)
    if !present.isEmpty { actions.append(.report(present)) }
    if shouldRestartMonitor(at: now, scan: scan) { actions.append(.restartMonitor) }
    return actions
  }

  // MARK: Decisions

  /// The devices present at `now` by the rule of `scan`, in path order (bluetoothd's objects
  /// first, then the ones held after their removal).
  func present(
    at now: NearbyClock.Instant, scan: ScanPlan?, adapter: DBusObjectPath?,
    devices: [DBusObjectPath: DeviceState]
  ) -> [Present] {
    switch scan {
    case nil:
      return []
    case .monitor:
      return monitorHeard.filter { now - $0.value < configuration.monitorLostAfter }.keys.sorted()
        .compactMap { path in devices[path].map { Present(path: path, device: $0) } }
    case .discovery(beside: _?):
      return devices.sorted { $0.key < $1.key }.compactMap { path, device in
        let last = max(device.lastData, monitorHeard[path] ?? device.lastData)
        guard device.heard, device.isOn(adapter: adapter, at: path),
          now - last < configuration.reportedDiscoveryHold
        else { return nil }
        return Present(path: path, device: device)
      }
    case .discovery(beside: nil):
      let kept = devices.sorted { $0.key < $1.key }.compactMap { path, device -> Present? in
        guard device.heard, device.isOn(adapter: adapter, at: path),
          !device.isKept || now - device.lastData < configuration.temporaryTimeout
        else { return nil }
        return Present(path: path, device: device)
      }
      let removed = vanished.sorted { $0.key < $1.key }.compactMap { path, entry -> Present? in
        guard devices[path] == nil, now - entry.at < configuration.rediscoveryGrace else {
          return nil
        }
        return Present(path: path, device: entry.device)
      }
      return kept + removed
    }
  }

  /// Whether a device present under the monitor has been silent for 4/10 of
  /// `monitorLostAfter` and the monitor was not restarted within that time.
  func shouldRestartMonitor(at now: NearbyClock.Instant, scan: ScanPlan?) -> Bool {
    guard case .monitor = scan else { return false }
    let refreshAfter = configuration.monitorRefreshAfter
    if let lastMonitorRefresh, now - lastMonitorRefresh < refreshAfter { return false }
    return monitorHeard.values.contains {
      now - $0 >= refreshAfter && now - $0 < configuration.monitorLostAfter
    }
  }
}
