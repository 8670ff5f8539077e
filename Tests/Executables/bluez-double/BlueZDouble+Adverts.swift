import DBus
import Foundation

/// Advert registration: `RegisterAdvertisement`/`UnregisterAdvertisement`, `Release`, and a
/// client leaving the bus.
extension BlueZDouble {
  func register(_ name: String, owner: String, path: DBusObjectPath) async throws {
    try scheduledFailure("RegisterAdvertisement")
    let adapter = try adapter(name)
    let key = AdvertKey(owner: owner, path: path)
    guard adapter.adverts[key] == nil else {
      throw DBusError(BlueZErrors.alreadyExists, "Already Exists")
    }
    guard adapter.adverts.count < Int(adapter.supportedInstances) else {
      throw DBusError(BlueZErrors.notPermitted, "Maximum advertisements reached")
    }
    guard let connection else { throw DBusError(BlueZErrors.failed, "restarting") }
    // bluetoothd reads the advert from the client's object, as here.
    let properties: [String: DBusValue]
    do {
      properties = try await connection.allProperties(
        interface: "org.bluez.LEAdvertisement1", of: owner, at: path, timeout: .seconds(2))
    } catch {
      // Real bluetoothd never answers RegisterAdvertisement of an object the caller does not
      // export (item 15: the caller's own timeout ended the call, NoReply after 25 s).
      try await Self.neverAnswer()
    }
    let advert = try RegisteredAdvert(owner: owner, path: path, properties: properties)
    guard advert.payloadLength <= 31 else {
      throw DBusError(BlueZErrors.invalidLength, "Advertising data too long.")
    }
    guard adapters[name]?.powered == true else {
      throw DBusError(BlueZErrors.notReady, "Resource Not Ready")
    }
    if advert.type == "broadcast", let current = adapters[name], current.isScanning,
      current.adverts.isEmpty
    {
      // The first advert of an adapter that scans is refused, as on the real stack
      // (docs/bluez-vm-findings.md item D): with no advert running, the kernel sets a new
      // random address for it (Linux 6.1 defers that only while advertising) and the
      // controller refuses LE Set Random Address while it scans (Bluetooth Core: Command
      // Disallowed; kernel log "Opcode 0x2005 failed: -16"); bluetoothd answers Failed. Any
      // client's discovery session or monitor counts, and so does a rotation that unregisters
      // the old advert first. With an advert running, the change waits and BlueZ accepts.
      // A connectable ("peripheral") advert goes out from the adapter's public address (the
      // kernel sets a random address only for a non-connectable advert when privacy is off:
      // hci_update_random_address_sync), so it is not refused (read in Linux 6.1, not yet
      // seen in the VM).
      throw DBusError(BlueZErrors.failed, "Failed to register advertisement")
    }
    adapters[name]?.adverts[key] = advert
    if advertSlots[key] == nil {
      advertSlots[key] = nextSlot
      nextSlot += 1
    }
    await updateCounts(name)
    await syncAir()
  }

  func unregister(_ name: String, owner: String, path: DBusObjectPath) async throws(DBusError) {
    _ = try adapter(name)
    let key = AdvertKey(owner: owner, path: path)
    guard adapters[name]?.adverts.removeValue(forKey: key) != nil else {
      throw DBusError(BlueZErrors.doesNotExist, "Does Not Exist")
    }
    await updateCounts(name)
    await syncAir()
  }

  /// Calls `Release` on the client's advert object (bluetoothd does when it drops one).
  func release(_ key: AdvertKey, on name: String) async {
    var call = DBusMessage.methodCall(
      destination: key.owner, path: key.path, interface: "org.bluez.LEAdvertisement1",
      member: "Release")
    call.noReplyExpected = true
    _ = try? connection?.send(call)
  }

  func clientLeft(_ client: String) async {
    for name in adapters.keys {
      let keptMonitors = adapters[name]?.monitors.filter { $0.key.owner != client } ?? [:]
      adapters[name]?.monitors = keptMonitors
      // Computed first: the right side of an optional-chained assignment runs inside the
      // access to `adapters` (exclusivity).
      let keptApps: Set<AdvertKey> = adapters[name]?.monitorApps.filter { $0.owner != client } ?? []
      adapters[name]?.monitorApps = keptApps
      let had = adapters[name]?.discovery.removeValue(forKey: client) != nil
      if had, adapters[name]?.discovery.isEmpty == true { await discoveryEnded(name) }
      adapters[name]?.filters[client] = nil
      let before = adapters[name]?.adverts.count ?? 0
      let kept = adapters[name]?.adverts.filter { $0.key.owner != client } ?? [:]
      adapters[name]?.adverts = kept
      if had || before != adapters[name]?.adverts.count { await updateCounts(name) }
    }
    await gattClientLeft(client)
    await syncAir()
  }
}
