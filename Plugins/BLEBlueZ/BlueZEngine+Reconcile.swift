import Core
import DBus
import Logging
import Strategy
import Tokens

/// Making BlueZ match the wishes: the status, the advert, and the calls to bluetoothd that
/// every change goes through.
extension BlueZEngine {
  /// Re-applies the wishes after anything changed; errors are logged and the status tells.
  func reconcile() async {
    updateStatus()
    try? await applyAdvert(throwing: false)
    try? await applyScan(throwing: false)
  }

  /// Why nothing can be done now, or `nil` when the adapter is usable.
  func problem() -> BlueZMediumError? {
    if accessDenied { return .permissionDenied(BlueZFix.permission) }
    if !bluezPresent { return .bluetoothdUnavailable(BlueZFix.noDaemon) }
    guard let chosen, let adapter = adapters[chosen] else {
      return .poweredOff(BlueZFix.noAdapter(configuration.adapter))
    }
    if !adapter.powered { return .poweredOff(BlueZFix.off(adapter.name)) }
    return nil
  }

  func updateStatus() {
    let next: MediumStatus =
      switch problem() {
      case nil: .ready
      case .poweredOff: .poweredOff
      case .permissionDenied(let fix): .permissionDenied(fix)
      case let other?: .unavailable(other.description)
      }
    guard next != status, !isShutDown else { return }
    status = next
    logger.debug("bluez \(name): status \(next)")
    statuses.yield(next)
  }

  /// Makes BlueZ's advert match ``wantedToken``, one change at a time (see
  /// BlueZEngine+Gates.swift): a token rotation arriving while the previous registration waits
  /// for bluetoothd would otherwise register a second advert and leave the first one on the
  /// air.
  func applyAdvert(throwing: Bool) async throws {
    await lock(.advert)
    defer { unlock(.advert) }
    try await applyAdvertNow(throwing: throwing)
  }

  /// Unregisters an advert whose token is no longer wanted, then registers the wanted one.
  /// Runs under the advert gate.
  func applyAdvertNow(throwing: Bool) async throws {
    if let current = advert, current.token != wantedToken || problem() != nil {
      advert = nil
      if problem() == nil {
        _ = try? await bluez(
          chosen!, "org.bluez.LEAdvertisingManager1", "UnregisterAdvertisement",
          [.objectPath(current.path)])
      }
      await connection.unexport(at: current.path)
    }
    guard let token = wantedToken, advert == nil else { return }
    if let problem = problem() {
      if throwing { throw problem }
      return
    }
    let adapter = chosen!
    guard adapters[adapter]?.hasAdvertising == true else {
      if throwing {
        throw BlueZMediumError.bluez(
          DBusError(.notSupported, "adapter \(name) cannot advertise (no LEAdvertisingManager1)"))
      }
      return
    }
    advertCounter += 1
    let path = try Self.advertRoot.appending("advert\(advertCounter)")
    let object = AdvertObject(
      frame: BLETokenFrame(token: token, txPower: configuration.txPowerAtZeroMeters),
      localName: configuration.localName, connectable: configuration.connectable)
    try await connection.export(
      object.interface { [weak self] in await self?.released(path) }, at: path)
    do {
      try await registerAdvert(path, on: adapter)
      advert = (path, token)
      logger.debug("bluez \(name): advertising \(token)")
      noteSharedAdvertising()
    } catch {
      await connection.unexport(at: path)
      await noteAccess(error)
      logger.warning("bluez \(name): cannot advertise: \(error)")
      if throwing { throw BlueZMediumError.bluez(error) }
    }
  }

  /// Calls a BlueZ method, retrying `NotReady` (and `InProgress`, except for StartDiscovery)
  /// with a doubling delay.
  func bluez(
    _ path: DBusObjectPath, _ interface: String, _ member: String, _ arguments: [DBusValue]
  ) async throws(DBusError) -> [DBusValue] {
    var delay = configuration.retryDelay
    var attempt = 0
    while true {
      do {
        return try await connection.call(
          destination: Self.service, path: path, interface: interface, member: member, arguments,
          timeout: configuration.callTimeout)
      } catch {
        let retriable =
          error.name == .bluezNotReady
          || (error.name == .bluezInProgress && member != "StartDiscovery")
        guard retriable, attempt < configuration.retries, !isShutDown else { throw error }
        attempt += 1
        logger.debug("bluez \(name): \(member) answered \(error.name); retry in \(delay)")
        try? await Task.sleep(for: delay)
        delay = min(delay * 2, .seconds(2))
      }
    }
  }

  func noteAccess(_ error: DBusError) async {
    guard error.name == .accessDenied, !accessDenied else { return }
    accessDenied = true
    advert = nil
    activeScan = nil
    updateStatus()
  }
}
