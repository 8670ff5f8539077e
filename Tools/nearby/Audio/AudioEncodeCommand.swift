import CommandLineSupport
import ArgumentParser
import AudioModem
import Foundation
import Tokens

/// `nearby audio encode`: one token's frame, with silence around it, into a WAV file.
struct AudioEncodeCommand: AsyncParsableCommand {
  static let configuration = CommandConfiguration(
    commandName: "encode",
    abstract: "Write one token as an audio frame (18.5–20 kHz, ≈ 0.85 s) to a mono WAV file.",
    discussion: """
      Example: nearby audio encode --token 0123456789abcdef --out token.wav && aplay token.wav
      """)

  @Option(help: "The token: 16 hex digits.")
  var token: String

  @Option(help: "Sample rate in Hz: 48000 or 44100.")
  var rate = 48_000

  @Option(help: "Sample format: s16 (16-bit PCM) or f32 (32-bit float).")
  var format = "s16"

  @Option(help: "Peak level, 0 < level ≤ 1 (full scale).")
  var level: Float = 0.5

  @Option(help: "Seconds of silence before and after the frame.")
  var padding = 0.25

  @Option(help: "The WAV file to write.")
  var out: String

  func validate() throws {
    do {
      _ = try Token(hex: token)
    } catch {
      throw ValidationError("--token: \(error)")
    }
    guard rate == 48_000 || rate == 44_100 else {
      throw ValidationError("--rate must be 48000 or 44100, got \(rate)")
    }
    guard WAVFile.SampleFormat(rawValue: format) != nil else {
      throw ValidationError("--format must be s16 or f32, got \(format)")
    }
    guard level > 0, level <= 1 else {
      throw ValidationError("--level must be in 0 < level ≤ 1, got \(level)")
    }
    guard padding >= 0, padding <= 60 else {
      throw ValidationError("--padding must be between 0 and 60 seconds, got \(padding)")
    }
  }

  func run() throws {
    let token = try Token(hex: token)
    let encoder = try AudioModemEncoder(sampleRate: Double(rate), level: level)
    let silence = [Float](repeating: 0, count: Int(padding * Double(rate)))
    let wav = WAVFile(sampleRate: rate, samples: silence + encoder.samples(for: token) + silence)
    let data = wav.data(format: WAVFile.SampleFormat(rawValue: format) ?? .s16)
    do {
      try data.write(to: URL(fileURLWithPath: out), options: .atomic)
    } catch {
      StandardStreams.error("error: cannot write \(out): \(error.localizedDescription)\n")
      throw ExitCode(1)
    }
  }
}
