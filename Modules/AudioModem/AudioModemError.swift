/// Why the modem could not be set up as asked.
public enum AudioModemError: Error, Sendable, Hashable {
  /// The sample rate is outside ``ModemParameters/sampleRates``.
  case unsupportedSampleRate(Double)
  /// The output level is outside 0 < level ≤ 1.
  case invalidLevel(Float)
}

extension AudioModemError: CustomStringConvertible {
  public var description: String {
    switch self {
    case .unsupportedSampleRate(let rate):
      "sample rate \(rate) Hz is not supported: the 18.5–20 kHz band needs "
        + "\(Int(ModemParameters.sampleRates.lowerBound))–"
        + "\(Int(ModemParameters.sampleRates.upperBound)) Hz (44100 or 48000 are usual)"
    case .invalidLevel(let level):
      "output level \(level) is outside 0 < level ≤ 1 (1 is full scale)"
    }
  }
}
