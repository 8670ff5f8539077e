import CommandLineSupport
import ArgumentParser
import AudioPulse
import Core
import Foundation
import Logging
import Tokens

/// `nearby audio send`: transmits a token through PulseAudio for a while.
struct AudioSendCommand: AsyncParsableCommand {
  static let configuration = CommandConfiguration(
    commandName: "send",
    abstract: "Play a token through PulseAudio every 2–3 s for a number of seconds.",
    discussion: "Exits 1 when PulseAudio was never usable (the reason is printed).")

  @Option(help: "The token: 16 hex digits.") var token: String
  @Option(help: "How long to transmit, in seconds (0.5–3600).") var seconds = 10.0
  @OptionGroup var pulse: PulseOptions

  func validate() throws {
    do { _ = try Token(hex: token) } catch { throw ValidationError("--token: \(error)") }
    guard seconds >= 0.5, seconds <= 3600 else {
      throw ValidationError("--seconds must be between 0.5 and 3600, got \(seconds)")
    }
  }

  func run() async throws {
    let medium = try PulseAudioMedium(configuration: pulse.configuration, logger: pulse.logger)
    let statuses = Task { await PulseOptions.watch(medium.statusUpdates) }
    try await medium.transmit(try Token(hex: token))
    try await Task.sleep(for: .milliseconds(Int(seconds * 1000)))
    await medium.shutdown()
    if !(await statuses.value) { throw ExitCode(1) }
  }
}

/// `nearby audio listen`: prints the tokens PulseAudio's source carries.
struct AudioListenCommand: AsyncParsableCommand {
  static let configuration = CommandConfiguration(
    commandName: "listen",
    abstract: "Print the tokens heard through PulseAudio for a number of seconds.",
    discussion: """
      One line a token: "<token>  <snr> dB", or with --json {"snr_db":…,"token":"…"}. Exits 1 \
      when PulseAudio was never usable (the reason is printed).
      """)

  @Option(help: "How long to listen, in seconds (0.5–3600).") var seconds = 10.0
  @Flag(help: "One JSON object a line.") var json = false
  @OptionGroup var pulse: PulseOptions

  struct Line: Encodable {
    var token: String
    var snrDB: Double
    enum CodingKeys: String, CodingKey {
      case token
      case snrDB = "snr_db"
    }
  }

  func validate() throws {
    guard seconds >= 0.5, seconds <= 3600 else {
      throw ValidationError("--seconds must be between 0.5 and 3600, got \(seconds)")
    }
  }

  func run() async throws {
    let medium = try PulseAudioMedium(configuration: pulse.configuration, logger: pulse.logger)
    let json = json
    let printer = Task {
      for await sighting in medium.sightings {
        let snr = ((sighting.snr ?? 0) * 10).rounded() / 10
        let line =
          json
          ? JSONLine.encode(Line(token: sighting.token.hex, snrDB: snr))
          : String(format: "%@  %.1f dB", sighting.token.hex, snr)
        // Unbuffered, so that a reader sees each token as it is heard.
        StandardStreams.output(line + "\n")
      }
    }
    let statuses = Task { await PulseOptions.watch(medium.statusUpdates) }
    try await medium.startScanning()
    try await Task.sleep(for: .milliseconds(Int(seconds * 1000)))
    await medium.shutdown()
    await printer.value
    if !(await statuses.value) { throw ExitCode(1) }
  }
}

/// Where the PulseAudio medium plays and records.
struct PulseOptions: ParsableArguments {
  @Option(help: "PulseAudio server (default: $PULSE_SERVER or the session's).") var server: String?
  @Option(help: "Sink to play into (default: the default sink).") var sink: String?
  @Option(help: "Source to record from (default: the default source).") var source: String?

  /// Warnings and errors only: the command's own output is the tokens.
  var logger: Logger {
    var logger = Logger(label: "nearby.audio")
    logger.logLevel = .warning
    return logger
  }

  /// Prints every problem status to stderr until the stream ends; whether the medium was ever
  /// ready (the command exits 1 when it never was).
  static func watch(_ statuses: AsyncStream<MediumStatus>) async -> Bool {
    var wasReady = false
    for await status in statuses {
      if status == .ready {
        wasReady = true
      } else {
        StandardStreams.error("audio: \(status)\n")
      }
    }
    return wasReady
  }

  var configuration: PulseAudioConfiguration {
    PulseAudioConfiguration(server: server, sink: sink, source: source)
  }
}
