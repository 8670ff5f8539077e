import DBus
import Logging

/// Registering an advert on an adapter that our own scan keeps busy.
///
/// The kernel sets a new random address for our advert (non-connectable: a fresh
/// non-resolvable address) when the adapter has no advert running yet, and the controller
/// refuses that command while it scans (Bluetooth Core, HCI LE Set Random Address: "Command
/// Disallowed" while scanning is enabled; Linux 6.1 defers the change only while it
/// advertises). bluetoothd then answers `RegisterAdvertisement` with `org.bluez.Error.Failed`
/// "Failed to register advertisement" (kernel log: "Opcode 0x2005 failed: -16"). Seen in the
/// BlueZ VM for the first advert of an adapter that scans with a pattern monitor or discovery,
/// and for a token rotation (the old advert goes first): docs/bluez-vm-findings.md item D.
/// With an advert already running, a second one is accepted (the address change waits).
extension BlueZEngine {
  /// Registers our advert object at `path` on `adapter`. When BlueZ refuses it with
  /// `org.bluez.Error.Failed` while our scan runs, pauses the scan, registers once more and
  /// resumes the scan, inside the scan lock (``lockScan()``), so no other scan change
  /// interleaves and no plan stays recorded that BlueZ does not have. Only after a refusal:
  /// while an advert runs (a rotation that registers before unregistering, or a peer's advert
  /// on a shared adapter) BlueZ accepts it without a pause, and a pause costs the scan a gap.
  /// A refusal that persists with our scan paused (someone else scans on the adapter) is
  /// thrown, once, as any other error.
  func registerAdvert(_ path: DBusObjectPath, on adapter: DBusObjectPath) async throws(DBusError) {
    do throws(DBusError) {
      try await callRegister(path, on: adapter)
      return
    } catch  where error.name == .bluezFailed && (activeScan != nil || busyGates.contains(.scan)) {
      logger.info(
        "bluez \(name): BlueZ refused the advert while we scan (\(error)); pausing our scan to register it"
      )
    }
    await lockScan()
    defer { unlockScan() }
    if activeScan != nil { await stopActiveScan() }
    var refusal: DBusError?
    do {
      try await callRegister(path, on: adapter)
      logger.debug("bluez \(name): advert registered with our scan paused; resuming the scan")
    } catch {
      refusal = error
      logger.info(
        "bluez \(name): BlueZ refused the advert with our scan paused too (another client's scan?)"
      )
    }
    try? await applyScanNow(throwing: false)
    if let refusal { throw refusal }
  }

  private func callRegister(_ path: DBusObjectPath, on adapter: DBusObjectPath)
    async throws(DBusError)
  {
    _ = try await bluez(
      adapter, "org.bluez.LEAdvertisingManager1", "RegisterAdvertisement",
      [.objectPath(path), .vardict([:])])
  }

  /// Warns, once each time it begins, when our adapter carries other adverts beside ours
  /// (`ActiveInstances` > 1: another program's, or `btmgmt`'s) while we scan. A controller
  /// without extended advertising (btvirt's, and older ones) takes turns between its adverts
  /// by setting a new random address for each, which it refuses while it scans ("Command
  /// Disallowed"): then none of them goes out, ours included, and bluetoothd says nothing
  /// (docs/bluez-vm-findings.md item K). The medium cannot tell such a controller from one
  /// that has extended advertising, so it only says so.
  func noteSharedAdvertising() {
    guard let chosen, let adapter = adapters[chosen] else { return }
    let count = adapter.activeInstances ?? 0
    let shared = advert != nil && activeScan != nil && count > 1
    if shared, !warnedSharedAdvertising {
      logger.warning(
        "bluez \(name): the adapter carries \(count) adverts, ours and others', while we scan; a controller without extended advertising cannot take turns between them while it scans, so our advert may not go out"
      )
    }
    warnedSharedAdvertising = shared
  }
}
