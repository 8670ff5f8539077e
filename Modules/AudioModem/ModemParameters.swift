/// The modem's air interface: fixed, so that every device hears every other.
///
/// A frame is LoRa-style chirp spread spectrum in 18.5–20.0 kHz: six up-chirps and two
/// down-chirps (detection, timing and frequency offset), then 31 data chirps, each a cyclic
/// shift of the up-chirp carrying 5 bits. The 31 symbols are a Reed–Solomon RS(31, 16) code
/// word over GF(32) of the token and its CRC-16, scrambled. Raised-cosine ramps of 10 ms at
/// both ends keep the frame free of clicks.
public enum ModemParameters {
  /// The centre of the band, in Hz.
  public static let centerFrequency = 19_250.0
  /// The chirp's sweep, in Hz: 18.5–20.0 kHz.
  public static let bandwidth = 1_500.0
  /// Bits per data symbol.
  public static let spreadingFactor = 5
  /// Chips per symbol (2^spreadingFactor): the number of distinct symbol values.
  public static let chipsPerSymbol = 1 << spreadingFactor
  /// The duration of one chirp, in seconds (32 / 1500 Hz ≈ 21.3 ms).
  public static let symbolDuration = Double(chipsPerSymbol) / bandwidth
  /// Up-chirps at the start of a frame.
  public static let preambleUpChirps = 6
  /// Down-chirps after the up-chirps.
  public static let preambleDownChirps = 2
  /// Data symbols: one Reed–Solomon code word.
  public static let dataSymbols = 31
  /// Symbols in a frame.
  public static let frameSymbols = preambleUpChirps + preambleDownChirps + dataSymbols
  /// The raised-cosine ramp at each end of a frame, in seconds.
  public static let rampDuration = 0.010
  /// A frame's duration on the air, ramps included, in seconds (≈ 0.852 s).
  public static let airtime = Double(frameSymbols) * symbolDuration + 2 * rampDuration
  /// Sample rates the encoder and decoder accept, in Hz: the band must lie below Nyquist.
  public static let sampleRates: ClosedRange<Double> = 44_100...384_000

  /// The decoder's complex baseband rate: two samples a chip.
  static let basebandRate = 2 * bandwidth
  /// Baseband samples a symbol.
  static let basebandSymbol = 2 * chipsPerSymbol
}
