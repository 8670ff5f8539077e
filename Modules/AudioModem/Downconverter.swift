/// Moves the band to complex baseband and resamples it to ``ModemParameters/basebandRate``
/// (3 kHz), streaming: mixes with e^(−2πi·fc·t), then a Hann-windowed sinc low-pass evaluated
/// at each output instant (a table of 64 fractional phases), so any input rate works.
struct Downconverter: Sendable {
  let inputRate: Double
  /// Input samples per output sample.
  private let ratio: Double
  /// Taps of the low-pass, in input samples (even).
  private let taps: Int
  private static let phases = 64
  /// phases × taps coefficients, each phase normalised to unit DC gain.
  private let table: [Float]

  // Local oscillator e^(−iθ), advanced by complex multiplication and renormalised.
  private var oscillatorReal = 1.0
  private var oscillatorImaginary = 0.0
  private let stepReal: Double
  private let stepImaginary: Double

  // Mixed input, linear with compaction; `historyStart` is the input index of element 0.
  private var mixedReal: [Float] = []
  private var mixedImaginary: [Float] = []
  private var historyStart = 0
  private var inputCount = 0
  /// The index of the next output sample.
  private(set) var outputCount = 0
  /// The low-pass's equivalent noise bandwidth, in Hz: white noise of two-sided density N0/2
  /// leaves baseband samples of variance N0/2 × this.
  let noiseBandwidth: Double

  init(inputRate: Double) {
    self.inputRate = inputRate
    ratio = inputRate / ModemParameters.basebandRate
    // ±5 output periods: Hann transition ≈ ±600 Hz around a 1.5 kHz cut-off, so the band
    // (±750 Hz plus clock offsets) passes and what would alias onto it is ≥ 40 dB down.
    let halfSpan = Int((5 * ratio).rounded(.up))
    taps = 2 * halfSpan
    let cutoff = 1_500.0 / inputRate  // cycles per input sample
    var table = [Float](repeating: 0, count: Self.phases * taps)
    for phase in 0..<Self.phases {
      let fraction = Double(phase) / Double(Self.phases)
      var row = [Double](repeating: 0, count: taps)
      for tap in 0..<taps {
        let x = Double(tap - halfSpan + 1) - fraction
        let sinc = x == 0 ? 2 * cutoff : ModemMath.sin(2 * Double.pi * cutoff * x) / (Double.pi * x)
        let window = 0.5 + 0.5 * ModemMath.cos(Double.pi * x / Double(halfSpan))
        row[tap] = abs(x) < Double(halfSpan) ? sinc * window : 0
      }
      let sum = row.reduce(0, +)
      for tap in 0..<taps { table[phase * taps + tap] = Float(row[tap] / sum) }
    }
    self.table = table
    noiseBandwidth = inputRate * table[0..<taps].reduce(0) { $0 + Double($1) * Double($1) }
    let step = 2 * Double.pi * ModemParameters.centerFrequency / inputRate
    stepReal = ModemMath.cos(step)
    stepImaginary = -ModemMath.sin(step)
  }

  /// Mixes `input` and appends every baseband sample that is now complete to `real` and
  /// `imaginary`.
  mutating func process(
    _ input: UnsafeBufferPointer<Float>, real: inout [Float], imaginary: inout [Float]
  ) {
    var position = 0
    while position < input.count {
      let chunk = min(4096, input.count - position)
      mix(UnsafeBufferPointer(rebasing: input[position..<(position + chunk)]))
      position += chunk
      produce(real: &real, imaginary: &imaginary)
    }
  }

  private mutating func mix(_ input: UnsafeBufferPointer<Float>) {
    let start = mixedReal.count
    mixedReal.append(contentsOf: repeatElement(0, count: input.count))
    mixedImaginary.append(contentsOf: repeatElement(0, count: input.count))
    var re = oscillatorReal
    var im = oscillatorImaginary
    let sr = stepReal
    let si = stepImaginary
    mixedReal.withUnsafeMutableBufferPointer { outReal in
      mixedImaginary.withUnsafeMutableBufferPointer { outImaginary in
        for index in 0..<input.count {
          let sample = Double(input[index])
          outReal[start + index] = Float(sample * re)
          outImaginary[start + index] = Float(sample * im)
          let nextRe = re * sr - im * si
          im = re * si + im * sr
          re = nextRe
          if index & 1023 == 1023 {
            let scale = 1 / (re * re + im * im).squareRoot()
            re *= scale
            im *= scale
          }
        }
      }
    }
    let scale = 1 / (re * re + im * im).squareRoot()
    oscillatorReal = re * scale
    oscillatorImaginary = im * scale
    inputCount += input.count
  }

  private mutating func produce(real: inout [Float], imaginary: inout [Float]) {
    let halfSpan = taps / 2
    let phases = Self.phases
    while true {
      let center = Double(outputCount) * ratio
      var base = Int(center.rounded(.down))
      var phase = Int(((center - Double(base)) * Double(phases)).rounded())
      if phase == phases {
        phase = 0
        base += 1
      }
      let first = base - halfSpan + 1
      guard first + taps <= inputCount else { break }
      var sumReal: Float = 0
      var sumImaginary: Float = 0
      if first >= historyStart {
        let offset = first - historyStart
        table.withUnsafeBufferPointer { table in
          mixedReal.withUnsafeBufferPointer { mixedReal in
            mixedImaginary.withUnsafeBufferPointer { mixedImaginary in
              let row = phase * taps
              for tap in 0..<taps {
                let weight = table[row + tap]
                sumReal += weight * mixedReal[offset + tap]
                sumImaginary += weight * mixedImaginary[offset + tap]
              }
            }
          }
        }
      } else {
        // Before the first input sample (stream start): those samples count as zero.
        let row = phase * taps
        for tap in 0..<taps where first + tap >= historyStart {
          let weight = table[row + tap]
          sumReal += weight * mixedReal[first + tap - historyStart]
          sumImaginary += weight * mixedImaginary[first + tap - historyStart]
        }
      }
      real.append(sumReal)
      imaginary.append(sumImaginary)
      outputCount += 1
    }
    // Drop input no future output needs.
    let needed = Int((Double(outputCount) * ratio).rounded(.down)) - halfSpan
    let drop = needed - historyStart
    if drop > 4096 {
      mixedReal.removeFirst(drop)
      mixedImaginary.removeFirst(drop)
      historyStart += drop
    }
  }
}
