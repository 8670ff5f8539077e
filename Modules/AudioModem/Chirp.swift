/// The chirps of a frame, in complex baseband around ``ModemParameters/centerFrequency``.
///
/// The up-chirp sweeps −B/2 → +B/2 in one symbol time T; data symbol k is the up-chirp cyclically
/// shifted by k/M of a symbol; the down-chirp sweeps +B/2 → −B/2. Every chirp's phase integral
/// over T is zero, so phase is continuous from symbol to symbol.
enum Chirp: Sendable, Hashable {
  case up(shift: Int)
  case down

  private static let bandwidth = ModemParameters.bandwidth
  private static let duration = ModemParameters.symbolDuration

  /// ∫₀ˣ (−B/2 + B s/T) ds, in cycles.
  private static func sweep(_ x: Double) -> Double {
    -bandwidth * x / 2 + bandwidth * x * x / (2 * duration)
  }

  /// The baseband phase, in cycles, `time` seconds into the symbol (0 ≤ time; the chirp
  /// repeats after T).
  func phase(at time: Double) -> Double {
    let period = Self.duration
    let local = time - (time / period).rounded(.down) * period
    switch self {
    case .up(let shift):
      let offset = Double(shift) * period / Double(ModemParameters.chipsPerSymbol)
      let position = local + offset
      return position < period
        ? Self.sweep(position) - Self.sweep(offset)
        : Self.sweep(position - period) - Self.sweep(offset)
    case .down:
      return -Self.sweep(local)
    }
  }

  /// The chirp of a frame's symbol `index` (0 ..< frameSymbols) for the given data symbols.
  static func frame(_ index: Int, data: [UInt8]) -> Chirp {
    let up = ModemParameters.preambleUpChirps
    let down = ModemParameters.preambleDownChirps
    if index < up { return .up(shift: 0) }
    if index < up + down { return .down }
    return .up(shift: Int(data[index - up - down]))
  }
}
