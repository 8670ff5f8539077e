/// One change at a time to each thing we hold at BlueZ.
///
/// The engine is an actor, but a change of our scan or of our advert spans several awaited
/// calls to bluetoothd, and the actor lets other work run at each of them: the token and
/// beacon wishes, a `Release`, the watchdog and a token rotation arrive from different tasks.
/// Two changes of the same thing interleaving across their awaits would register a monitor or
/// an advert twice, or record a state BlueZ does not have. So each change of the scan runs
/// under the `.scan` gate and each change of the advert under the `.advert` gate; the others
/// wait their turn. An advert change may take the scan gate inside its own (pausing our scan
/// to register, BlueZEngine+AdvertWhileScanning.swift), never the other way round, so the two
/// cannot wait for each other.
extension BlueZEngine {
  enum Gate: Hashable, Sendable {
    case scan
    case advert
  }

  /// Waits until no other change behind this gate runs, then marks one as running; every
  /// ``lock(_:)`` is paired with an ``unlock(_:)``.
  func lock(_ gate: Gate) async {
    while busyGates.contains(gate) {
      await withCheckedContinuation { gateWaiters[gate, default: []].append($0) }
    }
    busyGates.insert(gate)
  }

  /// Ends the change that ``lock(_:)`` began and wakes the ones waiting (one of them gets
  /// the gate, the others wait again).
  func unlock(_ gate: Gate) {
    busyGates.remove(gate)
    for waiter in gateWaiters.removeValue(forKey: gate) ?? [] { waiter.resume() }
  }
}
