import CommandLineSupport
import ArgumentParser
import AudioModem
import AudioPulse
import Foundation
import Tokens

/// `nearby audio selftest`: does this speaker → microphone path carry 18.5–20 kHz?
struct AudioSelftestCommand: AsyncParsableCommand {
  static let configuration = CommandConfiguration(
    commandName: "selftest",
    abstract: "Play a 15–21 kHz sweep and a token through PulseAudio, record them, and report "
      + "whether this speaker → microphone path carries the 18.5–20 kHz band.",
    discussion: """
      For each 500 Hz band the sweep's loudest moment is compared with the band's median level \
      over the recording (the background). The path carries the band when every band in \
      18.5–20 kHz stands ≥ 15 dB above its background and the token is decoded. Exits 0 when \
      it does, 1 when it does not (the output says which band failed), 1 with an error when \
      PulseAudio cannot play or record.
      """)

  @Flag(help: "Print the result as one JSON object.") var json = false
  @Option(help: "Also write the recording to this WAV file (float32).") var saveRecording: String?
  @OptionGroup var pulse: PulseOptions

  struct Band: Encodable {
    var fromHz: Double
    var toHz: Double
    var snrDB: Double
    enum CodingKeys: String, CodingKey {
      case fromHz = "from_hz"
      case toHz = "to_hz"
      case snrDB = "snr_db"
    }
  }

  struct Result: Encodable {
    var carriesBand: Bool
    var tokenDecoded: Bool
    var tokenSNRDB: Double?
    var bands: [Band]
    enum CodingKeys: String, CodingKey {
      case carriesBand = "carries_band"
      case tokenDecoded = "token_decoded"
      case tokenSNRDB = "token_snr_db"
      case bands
    }
  }

  func run() async throws {
    let requested = pulse.configuration
    // The source's own rate (introspection blocks briefly: off the cooperative pool).
    let deviceRate = await Task.detached { PulseAudioLoopback.sampleRate(for: requested) }.value
    var configuration = requested
    // Latency does not matter here; a deep buffer keeps a busy machine from leaving gaps.
    configuration.playbackLatency = 0.5
    configuration.sampleRate = deviceRate
    let rate = Double(deviceRate)
    let token = Token.random()
    let sweep = BandCheck.sweep(seconds: 2, rate: rate)
    let frame = try AudioModemEncoder(sampleRate: rate).samples(for: token)
    let played = sweep + [Float](repeating: 0, count: Int(0.3 * rate)) + frame
    let recording: [Float]
    do {
      recording = try await PulseAudioLoopback.run(played, configuration: configuration)
    } catch {
      StandardStreams.error("error: \(error)\n")
      throw ExitCode(1)
    }

    if let path = saveRecording {
      let wav = WAVFile(sampleRate: deviceRate, samples: recording)
      try wav.data(format: .f32).write(to: URL(fileURLWithPath: path))
    }
    let checked = BandCheck.bands(in: recording, rate: rate)
    var decoder = try AudioModemDecoder(sampleRate: rate)
    let found = (decoder.process(recording) + decoder.finish()).first { $0.token == token }
    let carries = BandCheck.carries(checked) && found != nil
    let bands = checked.map { Band(fromHz: $0.fromHz, toHz: $0.toHz, snrDB: $0.snrDB) }
    let result = Result(
      carriesBand: carries, tokenDecoded: found != nil,
      tokenSNRDB: found.map { ($0.snrDB * 10).rounded() / 10 }, bands: bands)
    if json {
      print(JSONLine.encode(result))
    } else {
      for band in bands {
        print(
          String(
            format: "%5.1f–%4.1f kHz  %5.1f dB above background", band.fromHz / 1000,
            band.toHz / 1000, band.snrDB))
      }
      print(
        found.map { String(format: "token decoded, SNR %.1f dB", $0.snrDB) }
          ?? "token NOT decoded")
      print(
        carries
          ? "this path carries 18.5–20 kHz: audio tokens will work"
          : "this path does NOT carry 18.5–20 kHz well enough for audio tokens "
            + "(check the volume, the devices chosen, and that nothing resamples below 44.1 kHz)")
    }
    if !carries { throw ExitCode(1) }
  }
}
