import Core
import DBus
import Logging
import Strategy
import Tokens
import BeaconFrames

/// Making BlueZ match the wishes: the status, the advert, and the calls to bluetoothd that
/// every change goes through. What the problem and the status are, the advert's steps and the
/// retries of a failed call are decided by ``ReconcileStateMachine`` (``reconciler``); this
/// extension performs them.
extension BlueZEngine {
  /// Re-applies the wishes after anything changed; errors are logged and the status tells.
  func reconcile() async {
    updateStatus()
    try? await applyAdvert(throwing: false)
    try? await applyScan(throwing: false)
  }

  /// Whether the medium shut down.
  var isShutDown: Bool { reconciler.isShutDown }
  /// The status last told.
  var status: MediumStatus? { reconciler.status }

  /// What the engine knows of bluetoothd and the chosen adapter, for ``reconciler``.
  var facts: ReconcileStateMachine.Facts {
    ReconcileStateMachine.Facts(
      daemon: daemon,
      adapter: chosen.flatMap { adapters[$0] }.map {
        .init(name: $0.name, powered: $0.powered, hasAdvertising: $0.hasAdvertising)
      })
  }

  /// Why nothing can be done now, or `nil` when the adapter is usable.
  func problem() -> BlueZMediumError? { reconciler.problem(facts) }

  /// Tells the status when it changed.
  func updateStatus() {
    guard let next = reconciler.update(facts) else { return }
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

  /// Unregisters an advert whose token is no longer wanted, then registers the wanted one
  /// (the steps ``reconciler`` gives). Runs under the advert gate.
  func applyAdvertNow(throwing: Bool) async throws {
    if case .withdraw(let path, let atBlueZ)? = reconciler.nextAdvertStep(
      advertised: advert, wanted: wantedToken, facts: facts)
    {
      advert = nil
      if atBlueZ {
        _ = try? await bluez(
          chosen!, "org.bluez.LEAdvertisingManager1", "UnregisterAdvertisement",
          [.objectPath(path)])
      }
      await connection.unexport(at: path)
    }
    let token: Token
    switch reconciler.nextAdvertStep(advertised: advert, wanted: wantedToken, facts: facts) {
    case .register(let wanted)?: token = wanted
    case .cannotAdvertise(let error)?:
      if throwing { throw error }
      return
    case .withdraw?, nil: return
    }
    let adapter = chosen!
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

  /// Calls a BlueZ method, trying it again after the failures ``reconciler`` says to
  /// (`NotReady`, and `InProgress` except for StartDiscovery, with a doubling delay).
  func bluez(
    _ path: DBusObjectPath, _ interface: String, _ member: String, _ arguments: [DBusValue]
  ) async throws(DBusError) -> [DBusValue] {
    var attempt = 0
    while true {
      do {
        return try await connection.call(
          destination: Self.service, path: path, interface: interface, member: member, arguments,
          timeout: configuration.callTimeout)
      } catch {
        guard let delay = reconciler.retryDelay(after: error.name, member: member, attempt: attempt)
        else { throw error }
        attempt += 1
        logger.debug("bluez \(name): \(member) answered \(error.name); retry in \(delay)")
        try? await clock.sleep(for: delay)
      }
    }
  }

  func noteAccess(_ error: DBusError) async {
    guard error.name == .accessDenied, daemon != .refusedAccess else { return }
    daemon = .refusedAccess
    advert = nil
    activeScan = nil
    updateStatus()
  }
}
