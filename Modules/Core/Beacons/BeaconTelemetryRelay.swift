import Tokens
import BeaconFrames

/// Pairs the telemetry frames a manager hears (Eddystone-TLM, which identify nothing) with the
/// beacon id advertised by the same transmitter, and holds the latest of each until the id is
/// next asked of the resolver (``take(_:)``): telemetry travels with look-ups, so it costs no
/// request of its own.
///
/// A TLM heard before its transmitter's id waits for it. At most ``capacity`` transmitters and
/// ids are held; past that the held telemetry is dropped (a newer frame comes soon). A value
/// owned by ``BeaconTracking``.
struct BeaconTelemetryRelay {
  let capacity: Int
  private var idByAddress: [String: BeaconID] = [:]
  private var waitingByAddress: [String: [UInt8]] = [:]
  private var pending: [BeaconID: [UInt8]] = [:]

  init(capacity: Int = 4096) { self.capacity = capacity }

  /// The telemetry frame of `frame`, from the frame type on; `nil` for frames of other kinds.
  static func telemetry(of frame: BeaconFrame) -> [UInt8]? {
    switch frame {
    case .eddystoneTLM(let tlm): tlm.frame
    case .eddystoneEncryptedTLM(let etlm): etlm.frame
    default: nil
    }
  }

  /// `address` advertised `id`.
  mutating func heard(_ id: BeaconID, from address: String) {
    if idByAddress[address] != id {
      if idByAddress.count >= capacity { idByAddress = [:] }
      idByAddress[address] = id
    }
    if let waiting = waitingByAddress.removeValue(forKey: address) { hold(waiting, for: id) }
  }

  /// `address` sent the telemetry `frame`.
  mutating func heardTelemetry(_ frame: [UInt8], from address: String) {
    if let id = idByAddress[address] {
      hold(frame, for: id)
    } else {
      if waitingByAddress.count >= capacity { waitingByAddress = [:] }
      waitingByAddress[address] = frame
    }
  }

  /// The latest telemetry held for `id`, forgotten once taken.
  mutating func take(_ id: BeaconID) -> [UInt8]? { pending.removeValue(forKey: id) }

  private mutating func hold(_ frame: [UInt8], for id: BeaconID) {
    if pending[id] == nil, pending.count >= capacity { pending = [:] }
    pending[id] = frame
  }
}
