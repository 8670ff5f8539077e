import Tokens

/// Finds tokens in a stream of audio samples.
///
/// Feed mono samples in buffers of any size with ``process(_:)-([Float])`` (or
/// ``process(_:)-(UnsafeBufferPointer<Float>)``); every token whose frame is complete comes back
/// with its time offset, an SNR estimate and the frequency offset. Memory is bounded (about
/// 1.4 s of 3 kHz complex baseband plus a few frame candidates), whatever is fed; non-finite
/// samples count as silence. A value type: one decoder per stream, used from one task or thread
/// at a time.
///
/// How: the band is mixed to complex baseband at 3 kHz; every symbol-long window is dechirped
/// against the up- and the down-chirp. Up-chirp windows agreeing on a peak (three of five)
/// followed by a down-chirp peak make a candidate, whose two peaks give the timing and the
/// frequency (hence clock) offset. The 31 data symbols are then demodulated by correlation with each possible
/// chirp at that timing, offset and rate, and Reed–Solomon decoded with erasures at the least
/// confident symbols; only a code word whose CRC-16 matches yields a token.
///
/// Frames that overlap (a second transmitter starting while a frame is on the air) are each
/// demodulated at their own timing: misaligned with the other's windows, each frame's chirps
/// outweigh the other's, so both usually decode (99.5 % of frames with two on the air at
/// 45 dB-Hz, 90 % with four) unless they start within about 60 ms of each other.
public struct AudioModemDecoder: Sendable {
  /// Samples per second of the input.
  public let sampleRate: Double

  private typealias P = ModemParameters
  private static let chips = P.chipsPerSymbol
  private static let window = P.basebandSymbol
  private static let ringSize = 4096
  private static let historySize = 8
  private static let maxPending = 16
  /// Peak over the mean of the other bins (the noise) of the five summed up-chirp windows,
  /// and of the down-chirp window.
  private static let upThreshold: Float = 2.8
  private static let downThreshold: Float = 3
  /// The largest frequency offset believed, in bins of 46.9 Hz: ±164 Hz, a clock offset of
  /// ±0.85 % (the goal is ±0.5 %) or a speed of ±2.9 m/s.
  private static let maxOffsetBins = 3.5

  private var downconverter: Downconverter
  private let noiseBandwidth: Double
  private let fft = FFT(size: P.basebandSymbol)
  private let upReference: (real: [Float], imaginary: [Float])
  private let downReference: (real: [Float], imaginary: [Float])

  private var ringReal = [Float](repeating: 0, count: ringSize)
  private var ringImaginary = [Float](repeating: 0, count: ringSize)
  /// Baseband samples produced so far.
  private var produced = 0
  private var nextWindow = 0
  /// Folded energies (chips per window) of the last windows, dechirped up and down.
  private var upEnergies = [Float](repeating: 0, count: historySize * chips)
  private var downEnergies = [Float](repeating: 0, count: historySize * chips)
  private var pending: [Candidate] = []
  /// The latest decoded frames: their starts (baseband samples) and tokens.
  private var decoded: [(start: Double, token: Token)] = []
  /// Whether a frame seems to be on the air now (a preamble was seen and its frame has not
  /// ended): a transmitter sharing the channel waits.
  public var isReceiving: Bool { !pending.isEmpty }

  /// Candidate frames demodulated so far (most preambles seen in noise are never demodulated).
  public var candidatesDemodulated: Int { candidateCount }
  private(set) var candidateCount = 0
  private(set) var failedCandidates = 0
  /// The data symbols of the last candidates demodulated (for tests).
  private(set) var recentSymbols: [[UInt8]] = []
  /// (detected start, refined start, refined offset in bins) of the last candidates (for tests).
  private(set) var recentCandidates: [(Double, Double, Double)] = []
  private var scratchReal: [Float] = []
  private var scratchImaginary: [Float] = []

  private struct Candidate: Sendable {
    /// The first up-chirp's nominal start, in baseband samples.
    var start: Double
    /// Frequency offset in chips (bins of B/M Hz).
    var offsetBins: Double
    /// How clearly the preamble stood out (product of the two peak ratios).
    var score: Float
    /// Whether its bin was among the two strongest in all five up-chirp windows: what a
    /// preamble inside another frame must show, where that frame's own data can pass the
    /// looser test (three windows of five) but rarely this one.
    var clearInCrowd: Bool
  }

  /// - Throws: ``AudioModemError/unsupportedSampleRate(_:)`` outside ``ModemParameters/sampleRates``.
  public init(sampleRate: Double = 48_000) throws(AudioModemError) {
    guard P.sampleRates.contains(sampleRate) else { throw .unsupportedSampleRate(sampleRate) }
    self.sampleRate = sampleRate
    downconverter = Downconverter(inputRate: sampleRate)
    noiseBandwidth = downconverter.noiseBandwidth
    func reference(_ chirp: Chirp) -> (real: [Float], imaginary: [Float]) {
      var real = [Float](repeating: 0, count: Self.window)
      var imaginary = [Float](repeating: 0, count: Self.window)
      for index in 0..<Self.window {
        let phase = -2 * Double.pi * chirp.phase(at: Double(index) / P.basebandRate)
        real[index] = Float(ModemMath.cos(phase))
        imaginary[index] = Float(ModemMath.sin(phase))
      }
      return (real, imaginary)
    }
    upReference = reference(.up(shift: 0))
    downReference = reference(.down)
  }

  /// Consumes `samples` (mono, any scale) and returns the tokens of frames that ended in them,
  /// in order of their start.
  public mutating func process(_ samples: [Float]) -> [DecodedToken] {
    samples.withUnsafeBufferPointer { process($0) }
  }

  /// Consumes `samples` (mono, any scale) and returns the tokens of frames that ended in them.
  public mutating func process(_ samples: UnsafeBufferPointer<Float>) -> [DecodedToken] {
    var found: [DecodedToken] = []
    var position = 0
    var clean = [Float](repeating: 0, count: min(samples.count, 8192))
    while position < samples.count {
      let count = min(clean.count, samples.count - position)
      for index in 0..<count {
        let value = samples[position + index]
        clean[index] = value.isFinite ? min(max(value, -1e6), 1e6) : 0
      }
      position += count
      scratchReal.removeAll(keepingCapacity: true)
      scratchImaginary.removeAll(keepingCapacity: true)
      clean.withUnsafeBufferPointer {
        downconverter.process(
          UnsafeBufferPointer(rebasing: $0[0..<count]), real: &scratchReal,
          imaginary: &scratchImaginary)
      }
      for index in scratchReal.indices {
        let slot = (produced + index) & (Self.ringSize - 1)
        ringReal[slot] = scratchReal[index]
        ringImaginary[slot] = scratchImaginary[index]
        // Analyse each window as soon as it is complete.
        if produced + index + 1 == (nextWindow + 1) * Self.window {
          analyse(window: nextWindow)
          nextWindow += 1
        }
      }
      produced += scratchReal.count
      found += demodulateReady()
    }
    return found
  }

  /// Decodes what can still be decoded at the end of a stream (frames cut short are dropped).
  public mutating func finish() -> [DecodedToken] {
    let tail = [Float](repeating: 0, count: Int(sampleRate * 0.05))
    return process(tail)
  }

  // MARK: Detection

  private mutating func analyse(window index: Int) {
    let start = index * Self.window
    let slot = index % Self.historySize
    let base = slot * Self.chips
    let upFolded = foldedEnergies(start: start, reference: upReference)
    let downFolded = foldedEnergies(start: start, reference: downReference)
    upEnergies.replaceSubrange(base..<(base + Self.chips), with: upFolded)
    downEnergies.replaceSubrange(base..<(base + Self.chips), with: downFolded)
    guard index >= 7 else { return }

    var summed = [Float](repeating: 0, count: Self.chips)
    for back in 2...6 {
      let base = ((index - back) % Self.historySize) * Self.chips
      for bin in 0..<Self.chips { summed[bin] += upEnergies[base + bin] }
    }
    let down = downFolded
    guard let up = Self.peak(summed), up.ratio >= Self.upThreshold,
      let dn = Self.peak(down), dn.ratio >= Self.downThreshold
    else { return }
    // Preamble windows agree on one bin; data windows (random symbols) do not. Another
    // frame's data on the air at the same power can outweigh the preamble in a window: the
    // bin need only be among each window's two strongest (away from it), in three windows
    // of five.
    let peakBin = Int(up.position.rounded()) % Self.chips
    var agreeing = 0
    for back in 2...6 {
      let base = ((index - back) % Self.historySize) * Self.chips
      if Self.isAmongStrongest(peakBin, in: upEnergies[base..<(base + Self.chips)]) {
        agreeing += 1
      }
    }
    guard agreeing >= 3 else { return }

    // b_up = −δ_up + c, b_down = δ + c, with δ_up = δ + 4εM (the clock offset ε = c·B/(M·fc)
    // moves the symbol boundaries between the centre of the up windows and the down window).
    let m = Double(Self.chips)
    var sum = up.position + dn.position
    sum -= (sum / m).rounded() * m  // to −M/2 ..< M/2
    let drift = 4 * P.bandwidth / P.centerFrequency
    var offsetBins = sum / (2 - drift)
    var delta = dn.position - offsetBins
    if abs(offsetBins) > Self.maxOffsetBins {
      // Beyond any clock offset we expect: the down-chirp peak was noise. Trust the up-chirps
      // alone (no offset); the refinement searches the rest.
      offsetBins = 0
      delta = -up.position
    }
    delta -= (delta / m).rounded(.down) * m  // 0 ..< M chips
    let epsilon = offsetBins * P.bandwidth / m / P.centerFrequency
    let boundary = Double(start) + 2 * delta  // start of the frame's 8th chirp
    let frameStart = boundary - 7 * Double(Self.window) / (1 + epsilon)

    let candidate = Candidate(
      start: frameStart, offsetBins: offsetBins, score: up.ratio * dn.ratio,
      clearInCrowd: agreeing == 5)
    if decoded.contains(where: {
      Self.sameFrame($0.start, frameStart) || Self.isMoot(candidate, inFrameAt: $0.start)
    }) {
      return
    }
    // Neighbouring windows may see the same preamble, shifted by a symbol: keep the clearest.
    let span = 1.5 * Double(Self.window)
    if let same = pending.firstIndex(where: { abs($0.start - frameStart) < span }) {
      let crowd = pending[same].clearInCrowd || candidate.clearInCrowd
      if pending[same].score < candidate.score { pending[same] = candidate }
      pending[same].clearInCrowd = crowd
      return
    }
    // Full (a frame's own data, noise, another frame's): the least clear goes, which is
    // rarely a frame's real preamble.
    if pending.count >= Self.maxPending {
      guard let weakest = pending.indices.min(by: { pending[$0].score < pending[$1].score }),
        pending[weakest].score < candidate.score
      else { return }
      pending.remove(at: weakest)
    }
    pending.append(candidate)
  }

  /// Whether `candidate`, starting inside the frame decoded at `decoded`, is more likely
  /// made of that frame's data than another transmitter's preamble: another transmitter may
  /// start during a frame (misaligned with its windows, each frame's chirps spread over two
  /// bins of the other's and lose to its own), but its preamble then stands among the two
  /// strongest bins of all five windows.
  private static func isMoot(_ candidate: Candidate, inFrameAt decoded: Double) -> Bool {
    let frameLength = Double(P.frameSymbols * window)
    return !candidate.clearInCrowd && candidate.start > decoded
      && candidate.start < decoded + frameLength
  }

  /// Whether a frame detected at `start` is the one decoded at `decoded`: the detector can
  /// place a frame up to two symbols early or late, but on its symbol grid (within a few
  /// samples), where another transmitter's frame falls only by chance.
  private static func sameFrame(_ decoded: Double, _ start: Double) -> Bool {
    let symbols = (start - decoded) / Double(window)
    return abs(symbols) < 2.5 && abs(symbols - symbols.rounded()) * Double(window) < 6
  }

  /// Whether `bin` (or a neighbour) is the strongest of `energies` or the strongest away from
  /// it (bins more than one apart): a second transmitter's chirp is allowed one peak above it.
  private static func isAmongStrongest(_ bin: Int, in energies: ArraySlice<Float>) -> Bool {
    let base = energies.startIndex
    func near(_ a: Int, _ b: Int) -> Bool {
      let distance = abs(a - b)
      return min(distance, chips - distance) <= 1
    }
    var best = 0
    for candidate in 1..<chips where energies[base + candidate] > energies[base + best] {
      best = candidate
    }
    if near(best, bin) { return true }
    var second = -1
    for candidate in 0..<chips where !near(candidate, best) {
      if second < 0 || energies[base + candidate] > energies[base + second] { second = candidate }
    }
    return second >= 0 && near(second, bin)
  }

  /// The highest bin of `energies`, its position refined between bins, and its ratio to the
  /// mean; nil when all is zero.
  private static func peak(_ energies: [Float]) -> (position: Double, ratio: Float)? {
    var best = 0
    var total: Float = 0
    for bin in energies.indices {
      total += energies[bin]
      if energies[bin] > energies[best] { best = bin }
    }
    let count = energies.count
    // The mean of the bins away from the peak: the noise level.
    let near = energies[(best + count - 1) % count] + energies[best] + energies[(best + 1) % count]
    guard total > 0, total.isFinite, total - near > 0 else { return nil }
    let mean = (total - near) / Float(count - 3)
    let left = Double(energies[(best + count - 1) % count]) + 1e-30
    let center = Double(energies[best]) + 1e-30
    let right = Double(energies[(best + 1) % count]) + 1e-30
    let (l, c, r) = (ModemMath.log(left), ModemMath.log(center), ModemMath.log(right))
    let curvature = l - 2 * c + r
    let shift = curvature < 0 ? min(max(0.5 * (l - r) / curvature, -0.5), 0.5) : 0
    return (Double(best) + shift, energies[best] / mean)
  }

  /// Dechirps the window of baseband samples at `start`, transforms it and folds bins k and
  /// k + M (the two parts of a shifted chirp): one energy a chip.
  private func foldedEnergies(start: Int, reference: (real: [Float], imaginary: [Float]))
    -> [Float]
  {
    let n = Self.window
    var real = [Float](repeating: 0, count: n)
    var imaginary = [Float](repeating: 0, count: n)
    for index in 0..<n {
      let ring = (start + index) & (Self.ringSize - 1)
      let (a, b) = (ringReal[ring], ringImaginary[ring])
      let (c, d) = (reference.real[index], reference.imaginary[index])
      real[index] = a * c - b * d
      imaginary[index] = a * d + b * c
    }
    fft.forward(real: &real, imaginary: &imaginary)
    var output = [Float](repeating: 0, count: Self.chips)
    for bin in 0..<Self.chips {
      let high = bin + Self.chips
      output[bin] =
        real[bin] * real[bin] + imaginary[bin] * imaginary[bin] + real[high] * real[high]
        + imaginary[high] * imaginary[high]
    }
    return output
  }

  // MARK: Demodulation

  private mutating func demodulateReady() -> [DecodedToken] {
    var found: [DecodedToken] = []
    while let index = pending.firstIndex(where: { end(of: $0) <= produced }) {
      let candidate = pending.remove(at: index)
      guard Double(produced) - candidate.start < Double(Self.ringSize - Self.window) else {
        continue
      }
      if decoded.contains(where: {
        Self.sameFrame($0.start, candidate.start) || Self.isMoot(candidate, inFrameAt: $0.start)
      }) {
        continue
      }
      candidateCount += 1
      guard let (token, start) = demodulate(candidate) else {
        failedCandidates += 1
        continue
      }
      // Another candidate may have been refined onto a frame already decoded, or an echo
      // (another speaker, a later path) repeats it: one token once a frame's time.
      let frameLength = Double(P.frameSymbols * Self.window)
      if decoded.contains(where: { $0.token == token.token && abs($0.start - start) < frameLength })
      {
        continue
      }
      // Candidates inside this frame that its own data may have made are moot (and would hold
      // `isReceiving` past its end).
      pending.removeAll { Self.isMoot($0, inFrameAt: start) }
      found.append(token)
      decoded.append((start, token.token))
      if decoded.count > 8 { decoded.removeFirst() }
    }
    return found.sorted { $0.offset < $1.offset }
  }

  /// The baseband index after the candidate's last data symbol (with slack for drift).
  private func end(of candidate: Candidate) -> Int {
    Int(candidate.start.rounded(.up)) + (P.frameSymbols + 2) * Self.window + 4
  }

  /// The token of a candidate frame and the frame's refined start, or nil.
  private mutating func demodulate(_ detected: Candidate) -> (DecodedToken, Double)? {
    let candidate = refine(detected)
    var pass = demodulationPass(candidate, drift: (0, 0))
    var decoded = FrameCodec.token(from: pass.symbols, confidence: pass.confidence)
    if decoded == nil {
      // Data-aided retry: the peaks' fractional offsets reveal a residual timing error and
      // drift (from a frequency, hence clock, estimate slightly off); correct and try again.
      let drift = Self.residualDrift(pass.fractions)
      if abs(drift.offset) > 0.1 || abs(drift.slope) * Double(P.dataSymbols) > 0.2 {
        pass = demodulationPass(candidate, drift: drift)
        decoded = FrameCodec.token(from: pass.symbols, confidence: pass.confidence)
      }
    }
    // At low SNR the preamble's timing estimate can be off by a fraction of a chip, which
    // shifts every data peak between bins: try a few offsets (the CRC is the judge).
    for offset in [0.35, -0.35, 0.7, -0.7] where decoded == nil && pass.signal > 0 {
      let moved = demodulationPass(candidate, drift: (offset, 0))
      if let found = FrameCodec.token(from: moved.symbols, confidence: moved.confidence) {
        decoded = found
        pass = moved
      }
    }
    recentCandidates.append((detected.start, candidate.start, candidate.offsetBins))
    if recentCandidates.count > 8 { recentCandidates.removeFirst() }
    recentSymbols.append(pass.symbols)
    if recentSymbols.count > 8 { recentSymbols.removeFirst() }
    guard let (token, corrected) = decoded, !Self.looksTruncated(pass.peaks) else { return nil }
    // E_signal / E_noise = C/N0 · N / B_noise for a matched correlation over N samples.
    let ratio = pass.noise > 0 ? pass.signal / pass.noise : 1e9
    let cn0 = 10 * ModemMath.log10(max(ratio, 1e-9) * noiseBandwidth / Double(Self.window))
    let snr = cn0 - 10 * ModemMath.log10(P.bandwidth)
    let offset = (candidate.start / P.basebandRate) - P.rampDuration
    let decodedToken = DecodedToken(
      token: token, offset: offset, snrDB: snr,
      frequencyOffset: candidate.offsetBins * P.bandwidth / Double(Self.chips),
      correctedSymbols: corrected)
    return (decodedToken, candidate.start)
  }

  /// The candidate moved to where the whole preamble (6 up- and 2 down-chirps, each correlated
  /// at the exact timing, frequency and rate) gives the most energy: first a symbol earlier or
  /// later (neighbouring windows see the same preamble), then a fine search of timing and
  /// frequency around the estimate.
  private func refine(_ candidate: Candidate) -> Candidate {
    let n = Double(Self.window)
    var best = candidate
    var bestMetric = preambleMetric(candidate)
    for shift in [-2 * n, -n, n, 2 * n] {
      var moved = candidate
      moved.start += shift
      let metric = preambleMetric(moved)
      if metric > bestMetric { (best, bestMetric) = (moved, metric) }
    }
    // Up-chirps see timing and frequency errors as one shift (c − δ), down-chirps as (c + δ):
    // search along each, the weakly measured down-chirp direction widest.
    let searches: [(timing: Double, frequency: Double, steps: [Double])] = [
      (1, 1, [-1, -0.75, -0.5, -0.25, -0.125, 0.125, 0.25, 0.5, 0.75, 1]),
      (1, -1, [-0.25, -0.125, 0.125, 0.25]),
      (1, 1, [-0.125, -0.06, 0.06, 0.125]),
    ]
    for search in searches {
      let center = best
      for step in search.steps {
        var moved = center
        moved.start += 2 * step * search.timing
        moved.offsetBins += step * search.frequency
        let metric = preambleMetric(moved)
        if metric > bestMetric { (best, bestMetric) = (moved, metric) }
      }
    }
    return best
  }

  /// Σ over the preamble's chirps of |correlation with the expected chirp|².
  private func preambleMetric(_ candidate: Candidate) -> Double {
    let n = Self.window
    let offsetHz = candidate.offsetBins * P.bandwidth / Double(Self.chips)
    let epsilon = offsetHz / P.centerFrequency
    let step = (1 + epsilon) / P.basebandRate
    var total = 0.0
    for symbol in 0..<(P.preambleUpChirps + P.preambleDownChirps) {
      let chirp = Chirp.frame(symbol, data: [])
      let start = candidate.start + Double(symbol * n) / (1 + epsilon)
      let q = Int(start.rounded(.up))
      let tau = start - Double(q)
      var sumReal = 0.0
      var sumImaginary = 0.0
      var phasor = Phasor(
        chirp: chirp == .down ? -1 : 1, step: step, tau: tau, offsetHz: offsetHz)
      for index in 0..<n {
        if (Double(index) - tau) * step >= P.symbolDuration { break }
        let ring = (q + index) & (Self.ringSize - 1)
        let (c, s) = phasor.next()
        let (a, b) = (Double(ringReal[ring]), Double(ringImaginary[ring]))
        sumReal += a * c - b * s
        sumImaginary += a * s + b * c
      }
      total += sumReal * sumReal + sumImaginary * sumImaginary
    }
    return total
  }

  /// A line fitted to the symbols' fractional peak offsets (in chips, −0.5…0.5, circular):
  /// offset at the first data symbol and change a symbol.
  private static func residualDrift(_ fractions: [Double]) -> (offset: Double, slope: Double) {
    func circularMean(_ values: ArraySlice<Double>) -> Double {
      var x = 0.0
      var y = 0.0
      for value in values {
        x += ModemMath.cos(2 * Double.pi * value)
        y += ModemMath.sin(2 * Double.pi * value)
      }
      return ModemMath.atan2(y, x) / (2 * Double.pi)
    }
    let half = fractions.count / 2
    let early = circularMean(fractions[..<half])
    let late = circularMean(fractions[half...])
    var change = late - early
    change -= change.rounded()
    let distance = Double(fractions.count) / 2
    let slope = change / distance
    let offset = early - slope * (Double(half) - 1) / 2
    return (offset, slope)
  }

  /// Whether some run of four data symbols carries far less signal than the others: a frame
  /// cut short (or drowned part-way) is not reported even when the code could fill it in.
  private static func looksTruncated(_ peaks: [Double]) -> Bool {
    let blocks = stride(from: 0, to: peaks.count, by: 4).map { start in
      let block = peaks[start..<min(start + 4, peaks.count)]
      return block.reduce(0, +) / Double(block.count)
    }
    let median = blocks.sorted()[blocks.count / 2]
    return blocks.contains { $0 < 0.25 * median }
  }

  private struct Pass {
    /// Each symbol's peak energy above the mean of the other bins.
    var peaks: [Double] = []
    var symbols: [UInt8] = []
    var confidence: [Float] = []
    /// The peak's position between bins (chips) in each symbol.
    var fractions: [Double] = []
    var signal = 0.0
    var noise = 0.0
  }

  /// Correlates each data symbol with every shifted chirp at the candidate's timing, frequency
  /// and rate, moved by `drift` (chips: offset + slope × symbol index).
  private func demodulationPass(_ candidate: Candidate, drift: (offset: Double, slope: Double))
    -> Pass
  {
    let m = Self.chips
    let n = Self.window
    let offsetHz = candidate.offsetBins * P.bandwidth / Double(m)
    let epsilon = offsetHz / P.centerFrequency
    let step = (1 + epsilon) / P.basebandRate  // chirp time per baseband sample
    let period = P.symbolDuration
    var pass = Pass()
    var dechirpedReal = [Double](repeating: 0, count: n)
    var dechirpedImaginary = [Double](repeating: 0, count: n)
    var wrapReal = [Double](repeating: 0, count: n)
    var wrapImaginary = [Double](repeating: 0, count: n)
    var energies = [Double](repeating: 0, count: m)

    for symbol in 0..<P.dataSymbols {
      let first = P.preambleUpChirps + P.preambleDownChirps + symbol
      let correction = 2 * (drift.offset + drift.slope * Double(symbol))  // in samples
      let start = candidate.start + Double(first * n) / (1 + epsilon) + correction
      let q = Int(start.rounded(.up))
      let tau = start - Double(q)  // −1 < τ ≤ 0
      var used = n
      var dechirp = Phasor(chirp: 1, step: step, tau: tau, offsetHz: offsetHz)
      let wrapStart = 2 * Double.pi * P.bandwidth * (-tau * step)
      let wrapStep = 2 * Double.pi * P.bandwidth * step
      var wrapRotor = Rotor(
        real: ModemMath.cos(wrapStart), imaginary: ModemMath.sin(wrapStart),
        stepReal: ModemMath.cos(wrapStep),
        stepImaginary: ModemMath.sin(wrapStep))
      for index in 0..<n {
        let u = (Double(index) - tau) * step
        if u >= period {
          used = index
          break
        }
        let ring = (q + index) & (Self.ringSize - 1)
        let (a, b) = (Double(ringReal[ring]), Double(ringImaginary[ring]))
        // Remove the base chirp and the carrier offset: d = r · e^(−2πi(g(u) + f·t)).
        let (c, s) = dechirp.next()
        dechirpedReal[index] = a * c - b * s
        dechirpedImaginary[index] = a * s + b * c
        wrapReal[index] = wrapRotor.real
        wrapImaginary[index] = wrapRotor.imaginary
        wrapRotor.advance()
      }
      // Correlate with each shifted chirp: e^(−2πi k B u / M), times e^(2πi B u) after its wrap.
      var best = 0
      var total = 0.0
      for k in 0..<m {
        let split = period * Double(m - k) / Double(m)
        let angle = -2 * Double.pi * Double(k) * P.bandwidth / Double(m)
        let u0 = -tau * step
        var rotReal = ModemMath.cos(angle * u0)
        var rotImaginary = ModemMath.sin(angle * u0)
        let stepReal = ModemMath.cos(angle * step)
        let stepImaginary = ModemMath.sin(angle * step)
        var sumReal = 0.0
        var sumImaginary = 0.0
        for index in 0..<used {
          var vr = dechirpedReal[index] * rotReal - dechirpedImaginary[index] * rotImaginary
          var vi = dechirpedReal[index] * rotImaginary + dechirpedImaginary[index] * rotReal
          if (Double(index) - tau) * step >= split {
            let (wr, wi) = (wrapReal[index], wrapImaginary[index])
            (vr, vi) = (vr * wr - vi * wi, vr * wi + vi * wr)
          }
          sumReal += vr
          sumImaginary += vi
          (rotReal, rotImaginary) = (
            rotReal * stepReal - rotImaginary * stepImaginary,
            rotReal * stepImaginary + rotImaginary * stepReal
          )
        }
        energies[k] = sumReal * sumReal + sumImaginary * sumImaginary
        total += energies[k]
        if energies[k] > energies[best] { best = k }
      }
      var second = 0.0
      for k in 0..<m where k != best { second = max(second, energies[k]) }
      let others = (total - energies[best]) / Double(m - 1)
      pass.symbols.append(UInt8(best))
      pass.confidence.append(Float(energies[best] / max(second, 1e-30)))
      pass.signal += max(energies[best] - others, 0)
      pass.peaks.append(max(energies[best] - others, 0))
      pass.noise += others
      let left = ModemMath.log(energies[(best + m - 1) % m] + 1e-30)
      let center = ModemMath.log(energies[best] + 1e-30)
      let right = ModemMath.log(energies[(best + 1) % m] + 1e-30)
      let curvature = left - 2 * center + right
      pass.fractions.append(
        curvature < 0 ? min(max(0.5 * (left - right) / curvature, -0.5), 0.5) : 0)
    }
    return pass
  }
}

/// e^(iθ) advanced by a fixed angle each step.
private struct Rotor {
  var real: Double
  var imaginary: Double
  let stepReal: Double
  let stepImaginary: Double

  mutating func advance() {
    (real, imaginary) = (
      real * stepReal - imaginary * stepImaginary, real * stepImaginary + imaginary * stepReal
    )
  }
}

/// e^(−2πi·φ(n)) for n = 0, 1, 2 … where φ is a base chirp's baseband phase (up: +1, down: −1)
/// at chirp time (n − τ)·step plus a frequency offset's phase, by recurrence: φ is quadratic
/// in n, so each step multiplies by a rotor that itself rotates by a fixed angle.
private struct Phasor {
  private var value: Rotor
  private var rate: Rotor

  init(chirp direction: Double, step: Double, tau: Double, offsetHz: Double) {
    let bandwidth = ModemParameters.bandwidth
    // φ(m) = c1·m + c2·m², m = n − τ (cycles).
    let c1 = direction * (-bandwidth / 2) * step + offsetHz / ModemParameters.basebandRate
    let c2 = direction * bandwidth / (2 * ModemParameters.symbolDuration) * step * step
    let p0 = -c1 * tau + c2 * tau * tau
    let p1 = c1 - 2 * c2 * tau
    let p2 = c2
    func rotor(_ cycles: Double, step stepCycles: Double) -> Rotor {
      let angle = -2 * Double.pi * (cycles - cycles.rounded())
      let stepAngle = -2 * Double.pi * (stepCycles - stepCycles.rounded())
      return Rotor(
        real: ModemMath.cos(angle), imaginary: ModemMath.sin(angle),
        stepReal: ModemMath.cos(stepAngle),
        stepImaginary: ModemMath.sin(stepAngle))
    }
    value = rotor(p0, step: 0)
    rate = rotor(p1 + p2, step: 2 * p2)
  }

  /// The current value (cos, sin), then a step on.
  mutating func next() -> (Double, Double) {
    let current = (value.real, value.imaginary)
    value = Rotor(
      real: value.real * rate.real - value.imaginary * rate.imaginary,
      imaginary: value.real * rate.imaginary + value.imaginary * rate.real,
      stepReal: 0, stepImaginary: 0)
    rate.advance()
    return current
  }
}
