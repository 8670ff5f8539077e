/// The self-check of a speaker → microphone path, for `nearby audio selftest` and the web page
/// (which runs this same code as WebAssembly): a sweep to play before a token's frame, and
/// what the recording of both says of each 500 Hz band from 15 to 21 kHz, namely how far the
/// sweep's loudest moment in the band stands above the band's median level over the recording
/// (its background). The path carries the modem's band when every band within it stands at
/// least ``carryingDB`` above its background (and the frame decodes, which the caller checks).
///
/// Pure functions of their arguments, with the modem's own elementary functions: the native
/// build and the page's give the same numbers.
public enum BandCheck {
  /// Where the sweep starts and ends, in Hz.
  public static let sweepLowHz = 15_000.0
  public static let sweepHighHz = 21_000.0
  /// The width of each band judged, in Hz.
  public static let bandWidthHz = 500.0
  /// How far above its background a band's sweep must stand for the band to carry, in dB.
  public static let carryingDB = 15.0

  /// One band's verdict.
  public struct Band: Sendable, Hashable {
    public var fromHz: Double
    public var toHz: Double
    /// The sweep's loudest moment over the band's median level, in dB (a tenth of a dB).
    public var snrDB: Double

    public init(fromHz: Double, toHz: Double, snrDB: Double) {
      self.fromHz = fromHz
      self.toHz = toHz
      self.snrDB = snrDB
    }

    /// Whether the band lies within the modem's 18.5–20 kHz.
    public var isModemBand: Bool {
      fromHz >= ModemParameters.centerFrequency - ModemParameters.bandwidth / 2
        && toHz <= ModemParameters.centerFrequency + ModemParameters.bandwidth / 2
    }
  }

  /// A linear sweep from ``sweepLowHz`` to ``sweepHighHz`` lasting `seconds` at `rate`, with
  /// 10 ms raised-cosine ramps, peak 0.5.
  public static func sweep(seconds: Double, rate: Double) -> [Float] {
    let count = Int(seconds * rate)
    let ramp = 0.01 * rate
    let (start, end) = (sweepLowHz, sweepHighHz)
    return (0..<count).map { index in
      let time = Double(index) / rate
      let phase = start * time + (end - start) * time * time / (2 * seconds)
      let edge = Double(Swift.min(index, count - 1 - index))
      let envelope = edge < ramp ? 0.5 * (1 - ModemMath.cos(Double.pi * edge / ramp)) : 1
      return Float(0.5 * envelope * ModemMath.sin(2 * Double.pi * (phase - phase.rounded(.down))))
    }
  }

  /// Each band's verdict on `recording` (at `rate`): 2048-sample Hann windows, half
  /// overlapping; a recording shorter than one window gives 0 dB everywhere.
  public static func bands(in recording: [Float], rate: Double) -> [Band] {
    let size = 2048
    let fft = FFT(size: size)
    let window = (0..<size).map { index in
      Float(0.5 - 0.5 * ModemMath.cos(2 * Double.pi * Double(index) / Double(size)))
    }
    var edges: [(Double, Double)] = []
    var low = sweepLowHz
    while low < sweepHighHz {
      edges.append((low, low + bandWidthHz))
      low += bandWidthHz
    }
    var levels = [[Double]](repeating: [], count: edges.count)
    var real = [Float](repeating: 0, count: size)
    var imaginary = [Float](repeating: 0, count: size)
    var start = 0
    while start + size <= recording.count {
      for index in 0..<size {
        real[index] = recording[start + index] * window[index]
        imaginary[index] = 0
      }
      fft.forward(real: &real, imaginary: &imaginary)
      for (band, (low, high)) in edges.enumerated() {
        var energy = 0.0
        let first = Int(low / rate * Double(size))
        let last = Swift.min(Int(high / rate * Double(size)), size / 2)
        for bin in first..<Swift.max(first, last) {
          energy += Double(real[bin] * real[bin] + imaginary[bin] * imaginary[bin])
        }
        levels[band].append(energy)
      }
      start += size / 2
    }
    var result: [Band] = []
    for (band, edge) in edges.enumerated() {
      let sorted = levels[band].sorted()
      let peak = sorted.last ?? 0
      let median = sorted.isEmpty ? 0 : sorted[sorted.count / 2]
      let snr =
        10
        * ModemMath.log10(
          Swift.max(peak, 1e-20) / Swift.max(median, peak * 1e-10, 1e-20))
      result.append(Band(fromHz: edge.0, toHz: edge.1, snrDB: (snr * 10).rounded() / 10))
    }
    return result
  }

  /// Whether every band within the modem's 18.5–20 kHz stands ``carryingDB`` or more above
  /// its background.
  public static func carries(_ bands: [Band]) -> Bool {
    let modem = bands.filter { $0.isModemBand }
    return !modem.isEmpty && modem.allSatisfy { $0.snrDB >= carryingDB }
  }
}
