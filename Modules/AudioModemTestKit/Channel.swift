import AudioModem
import Foundation
public import Tokens

/// An acoustic channel simulator for the modem's tests and benchmark: white noise at a given
/// C/N0, gain, clock offset by resampling, a synthetic room impulse response, and mixing of a
/// second transmitter. All functions are pure apart from the generator they are given.
public enum Channel {
  /// Mean square of `samples` (the power C of a frame when given exactly the frame).
  public static func power(of samples: [Float]) -> Double {
    guard !samples.isEmpty else { return 0 }
    return samples.reduce(0.0) { $0 + Double($1) * Double($1) } / Double(samples.count)
  }

  /// Adds white Gaussian noise such that a signal of power `signalPower` has the given
  /// carrier-to-noise-density ratio: N0 = C / 10^(C/N0 / 10), variance N0 · fs / 2.
  public static func addWhiteNoise(
    to samples: inout [Float], cn0: Double, signalPower: Double, sampleRate: Double,
    using generator: inout SplitMix64
  ) {
    let density = signalPower / pow(10, cn0 / 10)
    let deviation = (density * sampleRate / 2).squareRoot()
    for index in samples.indices {
      samples[index] += Float(deviation * generator.gaussian())
    }
  }

  /// White Gaussian noise of the given standard deviation.
  public static func whiteNoise(
    count: Int, deviation: Double, using generator: inout SplitMix64
  ) -> [Float] {
    (0..<count).map { _ in Float(deviation * generator.gaussian()) }
  }

  /// Multiplies by a gain in dB.
  public static func applyGain(_ samples: inout [Float], decibels: Double) {
    let factor = Float(pow(10, decibels / 20))
    for index in samples.indices { samples[index] *= factor }
  }

  /// What a receiver whose clock runs `1/(1 + offset)` times as fast as the sender's records:
  /// y[n] = x(n · (1 + offset)), so frequencies scale by 1 + offset (offset = 0.005 is +0.5 %).
  /// Windowed-sinc interpolation, 32 taps.
  public static func resample(_ samples: [Float], clockOffset offset: Double) -> [Float] {
    let ratio = 1 + offset
    let count = Int(Double(samples.count) / ratio)
    let half = 16
    var output = [Float](repeating: 0, count: count)
    // Low-pass below the lower of the two Nyquist rates when compressing.
    let cutoff = min(1, 1 / ratio) * 0.97
    for index in 0..<count {
      let position = Double(index) * ratio
      let base = Int(position.rounded(.down))
      var sum = 0.0
      for tap in (base - half + 1)...(base + half) where tap >= 0 && tap < samples.count {
        let x = Double(tap) - position
        let sinc = x == 0 ? cutoff : sin(Double.pi * cutoff * x) / (Double.pi * x)
        let window = 0.5 + 0.5 * cos(Double.pi * x / Double(half))
        sum += Double(samples[tap]) * sinc * window
      }
      output[index] = Float(sum)
    }
    return output
  }

  /// A synthetic room impulse response: the direct path (1.0), six early reflections in
  /// 2–15 ms, and a diffuse tail of Gaussian noise decaying 60 dB in `rt60` seconds; the
  /// reflections and tail together carry `reverberantToDirectDB` relative to the direct path.
  public static func roomImpulseResponse(
    rt60: Double, sampleRate: Double, reverberantToDirectDB: Double = 0,
    using generator: inout SplitMix64
  ) -> [Float] {
    let length = Int(rt60 * sampleRate)
    var response = [Double](repeating: 0, count: max(length, 2))
    let onset = Int(0.005 * sampleRate)
    for index in onset..<response.count {
      let time = Double(index) / sampleRate
      response[index] = generator.gaussian() * pow(10, -3 * time / rt60)
    }
    for _ in 0..<6 {
      let delay = Int((0.002 + 0.013 * generator.uniform()) * sampleRate)
      let sign: Double = generator.uniform() < 0.5 ? -1 : 1
      response[delay] += sign * (0.3 + 0.3 * generator.uniform()) * 20
    }
    let energy = response.reduce(0) { $0 + $1 * $1 }
    let scale = energy > 0 ? (pow(10, reverberantToDirectDB / 10) / energy).squareRoot() : 0
    var output = response.map { Float($0 * scale) }
    output[0] = 1
    return output
  }

  /// Linear convolution of `signal` with `response` (FFT overlap-add).
  public static func convolve(_ signal: [Float], with response: [Float]) -> [Float] {
    guard !signal.isEmpty, !response.isEmpty else { return [] }
    let outputCount = signal.count + response.count - 1
    var size = 1
    while size < 2 * response.count { size <<= 1 }
    let block = size - response.count + 1
    let fft = FFT(size: size)
    var responseReal = response + [Float](repeating: 0, count: size - response.count)
    var responseImaginary = [Float](repeating: 0, count: size)
    fft.forward(real: &responseReal, imaginary: &responseImaginary)
    var output = [Float](repeating: 0, count: outputCount)
    var start = 0
    while start < signal.count {
      let end = min(start + block, signal.count)
      var real = [Float](repeating: 0, count: size)
      var imaginary = [Float](repeating: 0, count: size)
      for index in start..<end { real[index - start] = signal[index] }
      fft.forward(real: &real, imaginary: &imaginary)
      for index in 0..<size {
        let (a, b) = (real[index], imaginary[index])
        let (c, d) = (responseReal[index], responseImaginary[index])
        real[index] = a * c - b * d
        imaginary[index] = a * d + b * c
      }
      fft.inverse(real: &real, imaginary: &imaginary)
      for index in 0..<size where start + index < outputCount {
        output[start + index] += real[index]
      }
      start = end
    }
    return output
  }

  /// Adds `other` × gain into `samples` starting at `offset` (growing `samples` if needed).
  public static func mix(
    _ other: [Float], into samples: inout [Float], at offset: Int, gainDB: Double = 0
  ) {
    let factor = Float(pow(10, gainDB / 20))
    if samples.count < offset + other.count {
      samples += [Float](repeating: 0, count: offset + other.count - samples.count)
    }
    for index in other.indices { samples[offset + index] += factor * other[index] }
  }
}
