import AudioModem
import Testing

/// The self-check's judgement (`nearby audio selftest`, and the page through the module): the
/// sweep in a quiet recording carries every band; a path that stops below the modem's band, or
/// silence, does not.
@Suite struct BandCheckTests {
  /// `samples` with 0.5 s before and after, in seeded noise about 35 dB under the sweep.
  func recording(_ samples: [Float], rate: Double) -> [Float] {
    var state: UInt64 = 0x9E37_79B9_7F4A_7C15
    func noise() -> Float {
      state = state &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
      return Float(Int64(bitPattern: state) >> 11) / Float(1 << 52) * 0.01
    }
    let pad = Int(0.5 * rate)
    let all = [Float](repeating: 0, count: pad) + samples + [Float](repeating: 0, count: pad)
    return all.map { $0 + noise() }
  }

  @Test(arguments: [44_100.0, 48_000.0])
  func aCleanSweepCarriesEveryBand(rate: Double) {
    let bands = BandCheck.bands(
      in: recording(BandCheck.sweep(seconds: 1.5, rate: rate), rate: rate), rate: rate)
    #expect(bands.count == 12)
    #expect(bands.first?.fromHz == 15_000 && bands.last?.toHz == 21_000)
    #expect(bands.filter(\.isModemBand).map(\.fromHz) == [18_500, 19_000, 19_500])
    #expect(bands.allSatisfy { $0.snrDB >= BandCheck.carryingDB }, "\(bands)")
    #expect(BandCheck.carries(bands))
  }

  /// A path that loses everything above 18 kHz (the first half of the sweep alone): the bands
  /// below pass, the modem's fail.
  @Test func aPathThatStopsBelowTheBandDoesNotCarryIt() {
    let rate = 48_000.0
    let sweep = BandCheck.sweep(seconds: 1.5, rate: rate)
    // Faded out over 10 ms rather than cut (a cut is a click, heard in every band).
    var half = Array(sweep.prefix(sweep.count / 2))
    let fade = Int(0.01 * rate)
    for index in 0..<fade { half[half.count - 1 - index] *= Float(index) / Float(fade) }
    let bands = BandCheck.bands(in: recording(half, rate: rate), rate: rate)
    #expect(bands.filter { $0.toHz <= 17_500 }.allSatisfy { $0.snrDB >= BandCheck.carryingDB })
    #expect(bands.filter(\.isModemBand).allSatisfy { $0.snrDB < BandCheck.carryingDB }, "\(bands)")
    #expect(!BandCheck.carries(bands))
  }

  @Test func silenceOrTooLittleCarriesNothing() {
    #expect(!BandCheck.carries(BandCheck.bands(in: recording([], rate: 48_000), rate: 48_000)))
    let short = BandCheck.bands(in: [Float](repeating: 0.1, count: 100), rate: 48_000)
    #expect(short.count == 12 && short.allSatisfy { $0.snrDB == 0 })
  }
}
