public import Tokens

/// A token found in audio by ``AudioModemDecoder``.
public struct DecodedToken: Sendable, Hashable {
  /// The token the frame carried (its CRC-16 matched).
  public var token: Token
  /// Seconds from the first sample given to the decoder to the start of the frame.
  public var offset: Double
  /// Estimated signal-to-noise ratio in the 1.5 kHz band, in dB (C/N0 − 31.8 dB).
  public var snrDB: Double
  /// Estimated carrier-to-noise-density ratio, in dB-Hz.
  public var carrierToNoiseDBHz: Double { snrDB + 10 * log10Bandwidth }
  /// The measured frequency offset of the sender against this receiver, in Hz (a clock
  /// offset of ε shows as ε × 19 250 Hz).
  public var frequencyOffset: Double
  /// Reed–Solomon symbols corrected (errors and erasures) to recover the token.
  public var correctedSymbols: Int

  public init(
    token: Token, offset: Double, snrDB: Double, frequencyOffset: Double, correctedSymbols: Int
  ) {
    self.token = token
    self.offset = offset
    self.snrDB = snrDB
    self.frequencyOffset = frequencyOffset
    self.correctedSymbols = correctedSymbols
  }

  private var log10Bandwidth: Double { 3.176_091_259_055_681 }  // log10(1500)
}
