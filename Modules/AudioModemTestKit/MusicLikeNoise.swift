import Foundation
import Tokens

/// A stream of synthetic "music": random notes (a fundamental of 55–3 520 Hz with harmonics up
/// to the Nyquist rate, decaying 1/h, with attack/decay envelopes), drum hits (broadband
/// noise bursts with an exponential decay), and a pink-ish noise bed. Not music, but like music
/// where it matters to the modem: tonal lines, harmonics into the 18–20 kHz band, transients.
public struct MusicLikeNoise: Sendable {
  public let sampleRate: Double
  private var generator: SplitMix64
  private struct Note: Sendable {
    /// One period of the note's waveform (its harmonics), 1024 samples.
    var table: [Float]
    var phase: Double
    var increment: Double
    var age: Int
    var length: Int
    var amplitude: Double
  }
  private var notes: [Note] = []
  private var drum = 0.0
  private var pink = (0.0, 0.0, 0.0)
  private var time = 0

  public init(sampleRate: Double, seed: UInt64) {
    self.sampleRate = sampleRate
    generator = SplitMix64(seed: seed)
  }

  /// The next `count` samples, peaking around ±0.5.
  public mutating func next(_ count: Int) -> [Float] {
    var output = [Float](repeating: 0, count: count)
    for index in 0..<count {
      // New events, a few per second.
      if generator.uniform() < 4 / sampleRate {
        let fundamental = 55 * pow(2, generator.uniform() * 6)
        let harmonics = max(1, min(40, Int(sampleRate / 2 / fundamental) - 1))
        var table = [Float](repeating: 0, count: 1024)
        for harmonic in 1...harmonics {
          let weight = 1 / Double(harmonic)
          for index in table.indices {
            table[index] += Float(
              weight * sin(2 * Double.pi * Double(harmonic * index) / Double(table.count)))
          }
        }
        notes.append(
          Note(
            table: table, phase: 0, increment: fundamental / sampleRate, age: 0,
            length: Int((0.2 + 1.5 * generator.uniform()) * sampleRate),
            amplitude: 0.05 + 0.1 * generator.uniform()))
        if notes.count > 8 { notes.removeFirst() }
      }
      if generator.uniform() < 2 / sampleRate { drum = 0.3 + 0.3 * generator.uniform() }
      var value = 0.0
      for noteIndex in notes.indices {
        var note = notes[noteIndex]
        let attack = min(1, Double(note.age) / (0.01 * sampleRate))
        let decay = exp(-3 * Double(note.age) / Double(note.length))
        let tone = Double(note.table[Int(note.phase * Double(note.table.count)) & 1023])
        value += note.amplitude * attack * decay * tone
        note.phase += note.increment
        note.phase -= note.phase.rounded(.down)
        note.age += 1
        notes[noteIndex] = note
      }
      notes.removeAll { $0.age >= $0.length }
      let white = generator.gaussian()
      value += drum * white
      drum *= exp(-1 / (0.08 * sampleRate))
      pink.0 = 0.997 * pink.0 + 0.03 * white
      pink.1 = 0.96 * pink.1 + 0.06 * white
      pink.2 = 0.6 * pink.2 + 0.1 * white
      value += 0.05 * (pink.0 + pink.1 + pink.2)
      output[index] = Float(value)
      time += 1
    }
    return output
  }
}
