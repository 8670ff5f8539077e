import Foundation
import AudioModem
import Testing
import Tokens

@Suite("Encoder")
struct EncoderTests {
  @Test("a frame lasts at most 1 s, peaks at the level asked for and fades in and out")
  func shape() throws {
    for rate in [44_100.0, 48_000.0] {
      let encoder = try AudioModemEncoder(sampleRate: rate, level: 0.25)
      let frame = encoder.samples(for: .random())
      #expect(ModemParameters.airtime <= 1.0)
      #expect(Double(frame.count) / rate <= 1.0)
      let peak = frame.map { abs($0) }.max() ?? 0
      #expect(peak <= 0.25 && peak > 0.24)
      #expect(abs(frame[0]) < 0.001 && abs(frame[frame.count - 1]) < 0.01)
      let firstMillisecond = frame.prefix(Int(rate / 1000)).map { abs($0) }.max() ?? 1
      #expect(firstMillisecond < 0.01)
    }
  }

  @Test("stays in its band: energy below 17 kHz is 38 dB under the signal")
  func spectrumStaysInBand() throws {
    let rate = 48_000.0
    let frame = try AudioModemEncoder(sampleRate: rate).samples(for: .random())
    let size = 65_536
    var real = frame + [Float](repeating: 0, count: size - frame.count)
    var imaginary = [Float](repeating: 0, count: size)
    FFT(size: size).forward(real: &real, imaginary: &imaginary)
    var inBand = 0.0
    var below = 0.0
    for bin in 0..<(size / 2) {
      let frequency = Double(bin) * rate / Double(size)
      let energy = Double(real[bin] * real[bin] + imaginary[bin] * imaginary[bin])
      if frequency >= 18_000 && frequency <= 20_500 { inBand += energy }
      if frequency < 17_000 { below += energy }
    }
    #expect(10 * log10(below / inBand) < -38)
  }

  @Test("rejects unsupported rates and levels with errors naming the limit")
  func invalidParameters() {
    #expect(throws: AudioModemError.unsupportedSampleRate(16_000)) {
      try AudioModemEncoder(sampleRate: 16_000)
    }
    #expect(throws: AudioModemError.invalidLevel(1.5)) { try AudioModemEncoder(level: 1.5) }
    #expect(throws: AudioModemError.unsupportedSampleRate(8_000)) {
      try AudioModemDecoder(sampleRate: 8_000)
    }
    #expect(AudioModemError.unsupportedSampleRate(16_000).description.contains("44100"))
  }
}
