public import Tokens

/// Turns tokens into audio: one frame of ``ModemParameters/airtime`` seconds a token.
///
/// A value type with no shared state: use it from any thread.
public struct AudioModemEncoder: Sendable {
  /// Samples per second of the output.
  public let sampleRate: Double
  /// Peak amplitude of the output, 0 < level ≤ 1 (full scale).
  public let level: Float

  /// - Throws: ``AudioModemError/unsupportedSampleRate(_:)`` outside
  ///   ``ModemParameters/sampleRates``; ``AudioModemError/invalidLevel(_:)`` outside 0 < level ≤ 1.
  public init(sampleRate: Double = 48_000, level: Float = 0.5) throws(AudioModemError) {
    guard ModemParameters.sampleRates.contains(sampleRate) else {
      throw .unsupportedSampleRate(sampleRate)
    }
    guard level > 0, level <= 1 else { throw .invalidLevel(level) }
    self.sampleRate = sampleRate
    self.level = level
  }

  /// The number of samples in one frame at this rate.
  public var frameLength: Int { Int((ModemParameters.airtime * sampleRate).rounded(.up)) }

  /// One frame carrying `token`: mono samples in −level…level, ramped in and out.
  public func samples(for token: Token) -> [Float] {
    let data = FrameCodec.symbols(for: token)
    let period = ModemParameters.symbolDuration
    let ramp = ModemParameters.rampDuration
    let symbols = ModemParameters.frameSymbols
    let carrier = ModemParameters.centerFrequency
    let end = Double(symbols) * period
    var output = [Float](repeating: 0, count: frameLength)
    for index in output.indices {
      // Time from the first chirp's nominal start; the ramps extend the first and last chirp.
      let time = Double(index) / sampleRate - ramp
      let symbol = min(max(Int((time / period).rounded(.down)), 0), symbols - 1)
      let local = time - Double(symbol) * period
      let chirp = Chirp.frame(symbol, data: data)
      let basebandPhase = local < 0 ? chirp.phase(at: local + period) : chirp.phase(at: local)
      var phase = carrier * (time + ramp) + basebandPhase
      phase -= phase.rounded(.down)
      var envelope = 1.0
      if time < 0 {
        envelope = 0.5 * (1 - ModemMath.cos(Double.pi * (time + ramp) / ramp))
      } else if time > end {
        envelope = 0.5 * (1 - ModemMath.cos(Double.pi * max(0, end + ramp - time) / ramp))
      }
      output[index] = level * Float(envelope * ModemMath.cos(2 * Double.pi * phase))
    }
    return output
  }
}
