import DBus
import Foundation

/// Discovery sessions and their filters: `SetDiscoveryFilter`, `StartDiscovery`,
/// `StopDiscovery`, the end of the last session, `RemoveDevice`.
extension BlueZDouble {
  func setFilter(_ name: String, client: String, _ filter: DBusValue) async throws(DBusError) {
    _ = try adapter(name)
    guard let map = filter.stringDictionary else {
      throw DBusError(BlueZErrors.invalidArguments, "Invalid arguments in method call")
    }
    // bluetoothd refuses a key it does not know (item 14: `{"Bogus": true}` answered
    // InvalidArguments), as it refuses a bad Transport.
    guard map.keys.allSatisfy(Self.discoveryFilters.contains) else {
      throw DBusError(BlueZErrors.invalidArguments, "Invalid arguments in method call")
    }
    if let transport = map["Transport"] {
      guard let text = transport.string, ["auto", "bredr", "le"].contains(text) else {
        throw DBusError(BlueZErrors.invalidArguments, "Invalid arguments in method call")
      }
    }
    adapters[name]?.filters[client] = map
  }

  /// Throws the error scheduled for `member` by `FailNext`, if any is left.
  func scheduledFailure(_ member: String) throws(DBusError) {
    guard let failure = failures[member], failure.count > 0 else { return }
    failures[member] = failure.count > 1 ? (failure.name, failure.count - 1) : nil
    throw DBusError(.init(failure.name), "scheduled by FailNext")
  }

  func startDiscovery(_ name: String, client: String) async throws(DBusError) {
    try scheduledFailure("StartDiscovery")
    let adapter = try adapter(name)
    guard adapter.powered else { throw DBusError(BlueZErrors.notReady, "Resource Not Ready") }
    guard adapter.discovery[client] == nil else {
      throw DBusError(BlueZErrors.inProgress, "Operation already in progress")
    }
    adapters[name]?.discovery[client] = adapter.filters[client] ?? [:]
    stalled.remove(name)
    await updateCounts(name)
    await syncAir()
  }

  func stopDiscovery(_ name: String, client: String) async throws(DBusError) {
    let adapter = try adapter(name)
    guard adapter.powered else { throw DBusError(BlueZErrors.notReady, "Resource Not Ready") }
    guard adapter.discovery[client] != nil else {
      throw DBusError(BlueZErrors.failed, "No discovery started")
    }
    adapters[name]?.discovery[client] = nil
    if adapters[name]?.discovery.isEmpty == true { await discoveryEnded(name) }
    await updateCounts(name)
  }

  /// The adapter's last discovery session ended: as bluetoothd does (item 11), each device it
  /// heard gets `PropertiesChanged` with RSSI invalidated, then is removed (InterfacesRemoved);
  /// the caller then sets `Discovering` false. While another client still discovers, nothing
  /// of this happens. Devices a registered monitor matches come back through ``syncAir()``.
  func discoveryEnded(_ name: String) async {
    guard let connection else { return }
    // A connected device is not temporary: bluetoothd keeps it.
    let linked = gatt.linkedDevices
    let heard = devices.filter { $0.value.hearing == name && !linked.contains($0.key) }
    for (path, _) in heard.sorted(by: { $0.key < $1.key }) {
      try? connection.emit(
        .signal(
          path: path, interface: "org.freedesktop.DBus.Properties", member: "PropertiesChanged",
          body: [.string("org.bluez.Device1"), .vardict([:]), .strings(["RSSI"])]))
    }
    for (path, device) in heard {
      devices[path] = nil
      await connection.unexport(at: path)
      tellMonitors("DeviceLost", device, path)
    }
  }

  /// `RemoveDevice`: a connected device is disconnected first, as bluetoothd does.
  func removeDevice(_ path: DBusObjectPath) async throws(DBusError) {
    let link = gatt.link(at: path)
    if let link { await dropLink(link.id) }
    guard devices.removeValue(forKey: path) != nil || link != nil else {
      throw DBusError(BlueZErrors.doesNotExist, "Does Not Exist")
    }
    await connection?.unexport(at: path)
  }
}
