import Tokens

/// A fixed battery of the modem's work whose every result folds into one 64-bit digest: the
/// elementary functions on a grid, and frames encoded at 44.1 and 48 kHz, buried in seeded
/// Gaussian noise at several levels and decoded. The native build and the web page's
/// WebAssembly build (Embedded Swift, the same sources) must give the same digest: the same
/// samples, bit for bit, and the same decisions. Tools/scripts/build-web-modem.sh exports it
/// from the module (`nearby_modem_vectors_digest`), and AudioModemTests compare the two.
public enum ModemVectors {
  /// The sample rates of the battery: what browsers run an AudioContext at.
  public static let sampleRates: [Double] = [44_100, 48_000]
  /// The noise's standard deviation beside a frame of peak 0.5 (0: clean); the last ones are
  /// near the decoder's limit, where a difference in one bit would change a decision.
  public static let noiseDeviations: [Double] = [0, 0.5, 2, 4]

  /// The digest of the battery for `seed` (the tokens and the noise).
  public static func digest(seed: UInt64) -> UInt64 {
    var digest = Digest()
    var x = -40.0
    while x < 40 {
      digest.add(ModemMath.sin(x))
      digest.add(ModemMath.cos(x))
      digest.add(ModemMath.atan2(x, 1.5))
      digest.add(ModemMath.log(abs(x) + 1e-3))
      x += 0.618
    }
    var random = SeededRandom(seed: seed)
    for rate in sampleRates {
      for deviation in noiseDeviations {
        let token = Token(value: random.next())
        // Valid by construction: rate and level are within the modem's ranges.
        guard let encoder = try? AudioModemEncoder(sampleRate: rate, level: 0.5),
          var decoder = try? AudioModemDecoder(sampleRate: rate)
        else { return 0 }
        let samples = frameInNoise(
          encoder.samples(for: token), rate: rate, deviation: deviation, random: &random)
        for sample in samples { digest.add(UInt64(sample.bitPattern)) }
        let found = decodeInQuanta(samples, with: &decoder)
        digest.add(UInt64(found.count))
        for decoded in found {
          digest.add(decoded.token.value)
          digest.add(UInt64(decoded.correctedSymbols))
          digest.add(decoded.offset)
          digest.add(decoded.snrDB)
          digest.add(decoded.frequencyOffset)
        }
      }
    }
    // The self-check's sweep and its verdict on it, in noise: the page judges its band with
    // this code too.
    let sweep = BandCheck.sweep(seconds: 0.5, rate: 48_000)
    let recording = frameInNoise(sweep, rate: 48_000, deviation: 0.01, random: &random)
    for band in BandCheck.bands(in: recording, rate: 48_000) { digest.add(band.snrDB) }
    return digest.value
  }

  /// How many of `count` frames at `rate`, each a random token of peak 0.5 with 0.3 s of
  /// silence around it, buried in white Gaussian noise of standard deviation `deviation`
  /// (seeded), decode to their token: one point of the success-against-C/N0 curve, which the
  /// native and the WebAssembly builds must draw alike (`nearby-bench web`). Frames are fed
  /// in render quanta of 128 samples, as the page's worklet feeds them.
  /// - Returns: the successes, or −1 for a rate the modem does not take.
  public static func successes(seed: UInt64, rate: Double, deviation: Double, count: Int) -> Int {
    guard let encoder = try? AudioModemEncoder(sampleRate: rate, level: 0.5) else { return -1 }
    var random = SeededRandom(seed: seed)
    var successes = 0
    for _ in 0..<count {
      guard var decoder = try? AudioModemDecoder(sampleRate: rate) else { return -1 }
      let token = Token(value: random.next())
      let samples = frameInNoise(
        encoder.samples(for: token), rate: rate, deviation: deviation, random: &random)
      let found = decodeInQuanta(samples, with: &decoder)
      if found.contains(where: { $0.token == token }) { successes += 1 }
    }
    return successes
  }

  /// `frame` with 0.3 s of silence before and after, plus white Gaussian noise of standard
  /// deviation `deviation` (none at 0, and no draw from `random` then).
  private static func frameInNoise(
    _ frame: [Float], rate: Double, deviation: Double, random: inout SeededRandom
  ) -> [Float] {
    let lead = Int(rate * 0.3)
    var samples = [Float](repeating: 0, count: lead + frame.count + lead)
    for index in frame.indices { samples[lead + index] = frame[index] }
    if deviation > 0 {
      for index in samples.indices { samples[index] += Float(deviation * random.gaussian()) }
    }
    return samples
  }

  /// What `decoder` finds in `samples` fed in chunks of one AudioWorklet render quantum (128
  /// frames), as the page feeds it, then flushed.
  private static func decodeInQuanta(_ samples: [Float], with decoder: inout AudioModemDecoder)
    -> [DecodedToken]
  {
    var found: [DecodedToken] = []
    var start = 0
    while start < samples.count {
      let end = min(start + 128, samples.count)
      found += samples[start..<end].withUnsafeBufferPointer { decoder.process($0) }
      start = end
    }
    return found + decoder.finish()
  }

  /// FNV-1a over 64-bit words.
  private struct Digest {
    var value: UInt64 = 0xcbf2_9ce4_8422_2325

    mutating func add(_ word: UInt64) {
      for shift in stride(from: 0, to: 64, by: 8) {
        value ^= (word >> UInt64(shift)) & 0xff
        value &*= 0x0000_0100_0000_01b3
      }
    }

    mutating func add(_ number: Double) { add(number.bitPattern) }
  }

  /// SplitMix64, and Gaussian deviates by Box and Muller on it.
  private struct SeededRandom {
    var state: UInt64

    init(seed: UInt64) { state = seed }

    mutating func next() -> UInt64 {
      state &+= 0x9e37_79b9_7f4a_7c15
      var z = state
      z = (z ^ (z >> 30)) &* 0xbf58_476d_1ce4_e5b9
      z = (z ^ (z >> 27)) &* 0x94d0_49bb_1331_11eb
      return z ^ (z >> 31)
    }

    /// A uniform deviate in (0, 1].
    mutating func unit() -> Double { Double(next() >> 11 + 1) / 9_007_199_254_740_992 }

    mutating func gaussian() -> Double {
      (-2 * ModemMath.log(unit())).squareRoot() * ModemMath.cos(2 * Double.pi * unit())
    }
  }
}
