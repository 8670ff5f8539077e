import DBus
import Logging

/// Our pattern monitor's life at bluetoothd: exporting and registering it, a `Release`, and an
/// adapter that keeps refusing monitors (docs/bluez-vm-findings.md item L).
///
/// - Each registration exports the monitor at a new path below ``advertRoot`` (`monitor0`,
///   `monitor1`, …). bluetoothd calls `Release` on the monitors an app held when the app
///   unregisters, asynchronously: with one path, the `Release` of the registration we just
///   ended could arrive after the next one and end that one instead.
/// - When the kernel refuses a monitor (`Add Adv Patterns Monitor` answered `Busy`, as after
///   a monitor added while its adapter powered off), bluetoothd calls `Release` but **keeps
///   the app** registered: every later `RegisterMonitor` from our connection then fails with
///   `AlreadyExists`. So a `Release` is always followed by our `UnregisterMonitor`, and an
///   `AlreadyExists` by an `UnregisterMonitor` and one more try.
/// - What counts as a refusal, the delays and the fallback to discovery are decided by
///   ``MonitorRefusalStateMachine`` (``monitorRefusal``); this extension performs them.
extension BlueZEngine {
  static func monitorPath(_ generation: Int) -> DBusObjectPath {
    try! advertRoot.appending("monitor\(generation)")
  }

  /// Whether monitors are set aside for now (the adapter refused them, see the extension's
  /// documentation).
  var monitorsRefused: Bool { monitorRefusal.monitorsRefused(at: clock.now) }

  /// Exports a monitor with the patterns at a new path, then registers it on the adapter;
  /// an `AlreadyExists` (bluetoothd kept our app after a refusal) is answered by unregistering
  /// and registering once more. A failure counts as a refusal. Runs under the scan lock.
  func registerMonitor(_ patterns: MonitorPatterns, on adapter: DBusObjectPath)
    async throws(DBusError)
  {
    // Exported before RegisterMonitor: bluetoothd never answers RegisterMonitor for objects it
    // cannot read (findings item 15), the call would only end with our callTimeout.
    if let old = exportedMonitorPath { await connection.unexport(at: old) }
    exportedMonitorPath = nil
    monitorGeneration += 1
    let generation = monitorGeneration
    let path = Self.monitorPath(generation)
    try await connection.export(
      MonitorObject.interface(
        patterns, onRelease: { [weak self] in await self?.monitorReleased(generation) },
        onDeviceFound: { [weak self] in await self?.monitorFound($0) },
        onDeviceLost: { [weak self] in await self?.monitorLost($0) }),
      at: path)
    exportedMonitorPath = path
    let register: () async throws(DBusError) -> Void = {
      _ = try await self.bluez(
        adapter, "org.bluez.AdvertisementMonitorManager1", "RegisterMonitor",
        [.objectPath(Self.advertRoot)])
    }
    do {
      do {
        try await register()
      } catch  where error.name == .bluezAlreadyExists {
        logger.info(
          "bluez \(name): bluetoothd still holds our earlier monitor registration; unregistering it"
        )
        await unregisterMonitor(on: adapter)
        try await register()
      }
    } catch {
      if problem() == nil {
        logRefusal(
          monitorRefusal.registrationFailed(at: clock.now), "RegisterMonitor failed: \(error)")
      }
      throw error
    }
    monitorRefusal.registered(at: clock.now)
  }

  /// `UnregisterMonitor` of our app on the adapter; errors (no such app) are of no interest.
  func unregisterMonitor(on adapter: DBusObjectPath) async {
    _ = try? await bluez(
      adapter, "org.bluez.AdvertisementMonitorManager1", "UnregisterMonitor",
      [.objectPath(Self.advertRoot)])
  }

  /// bluetoothd released the monitor of this registration: ends the scan it belonged to
  /// (unregistering our app, which bluetoothd keeps), then scans again after a delay, a
  /// growing one when the release came right after the registration (a refusal).
  func monitorReleased(_ generation: Int) async {
    // Not `activeScan` yet: bluetoothd may release a refused monitor right after answering
    // RegisterMonitor, before the scan change that registered it has recorded the scan. That
    // change holds the scan lock: waiting for the lock lets it finish, and the check below
    // then sees its scan (a release dropped here would leave the refusal uncounted and the
    // monitor silent until the watchdog).
    guard generation == monitorGeneration else { return }
    await lockScan()
    guard generation == monitorGeneration, activeScan?.monitorPatterns != nil else {
      unlockScan()
      return
    }
    let releasedAt = clock.now
    logger.debug("bluez \(name): BlueZ released our monitor")
    await stopActiveScan()
    unlockScan()
    let decision = monitorRefusal.released(at: releasedAt)
    if decision.verdict == .refusal {
      logRefusal(decision, "released right after its registration")
    }
    try? await clock.sleep(for: decision.delay)
    try? await applyScan(throwing: false)
  }

  /// Says what a refusal led to: monitors set aside for a while, or one more try.
  func logRefusal(_ decision: MonitorRefusalStateMachine.Decision, _ why: String) {
    if decision.fallbackUntil != nil {
      logger.warning(
        "bluez \(name): the adapter refused our pattern monitor \(decision.refusals) times in a row (\(why)); scanning with discovery for \(configuration.monitorRefusalFallback) before trying a monitor again"
      )
    } else {
      logger.info("bluez \(name): pattern monitor refused (\(why)); trying again")
    }
  }
}
