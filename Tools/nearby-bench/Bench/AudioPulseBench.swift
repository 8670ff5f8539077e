import TestSupport
import CommandLineSupport
import ArgumentParser
import AudioModem
import AudioPulse
import Core
import Foundation
import Logging
import MediumTestKit
import Tokens
import NearbyTesting

/// Latency through a real PulseAudio server: one medium transmits a fresh token, another
/// records the sink's monitor; from the end of the frame's airtime to the sighting.
struct AudioPulseBench: AsyncParsableCommand {
  static let configuration = CommandConfiguration(
    commandName: "audio-pulse",
    abstract: "Audio medium latency through PulseAudio: end of a frame's airtime → sighting.",
    discussion: """
      Needs a PulseAudio server with a sink whose monitor carries what is played, e.g. \
      `pactl load-module module-null-sink sink_name=bench`. Each round hands the sender a new \
      token (a rotation: the playback stream stays open, what is queued is flushed and the new \
      frame starts at once). The frame's start is taken as the moment transmit() returns; it \
      then still passes the playback buffer, so the figure is an upper bound. Exits 1 when no \
      token is heard at all (the figure would be of nothing), not when the goal is missed.
      """)

  @Option(help: "PulseAudio server (default: $PULSE_SERVER or the session's).") var server: String?
  @Option(help: "The sink to play into; its monitor is recorded.") var sink = "nearby"
  @Option(help: "Tokens to send.") var rounds = 20
  @Flag(
    help: """
      A short run for the test command, so the benchmark cannot rot: 3 tokens (replaces \
      --rounds).
      """)
  var short = false
  @Flag(help: "Print the results as one JSON object.") var json = false

  /// Tokens to send: 3 in a short run.
  var roundCount: Int { short ? 3 : rounds }

  struct Results: Encodable {
    var rounds: Int
    var heard: Int
    var latencyMilliseconds: [Double]
    var p50: Double
    var max: Double
  }

  func validate() throws {
    guard rounds > 0 else { throw ValidationError("--rounds must be > 0") }
  }

  func run() async throws {
    var logger = Logger(label: "nearby.bench")
    logger.logLevel = .warning
    let configuration = PulseAudioConfiguration(
      server: server, sink: sink, source: "\(sink).monitor")
    let sender = try PulseAudioMedium(configuration: configuration, logger: logger)
    let receiver = try PulseAudioMedium(configuration: configuration, logger: logger)
    let sightings = StreamRecorder(receiver.sightings)
    try await receiver.startScanning()
    try await Task.sleep(for: .milliseconds(500))
    var latencies: [Double] = []
    let rounds = roundCount
    for round in 1...rounds {
      let token = Token.random()
      try await sender.transmit(token)
      let start = Date()
      // The sighting's time is taken on the record thread as the token is reported.
      let heard = await sightings.first(since: .now, timeout: .seconds(5)) { $0.token == token }
      if let heard {
        let milliseconds = heard.time.timeIntervalSince(start) * 1000
        latencies.append(milliseconds - ModemParameters.airtime * 1000)
      }
      StandardStreams.error("bench: round \(round)/\(rounds)\n")
      try await Task.sleep(for: .milliseconds(300))
    }
    await sender.stopTransmitting()
    await sender.shutdown()
    await receiver.shutdown()
    guard !latencies.isEmpty else {
      throw CommandFailure(
        "none of \(rounds) tokens played into \(sink) was heard on \(sink).monitor within 5 s")
    }
    let sorted = latencies.sorted()
    let results = Results(
      rounds: rounds, heard: latencies.count, latencyMilliseconds: latencies,
      p50: sorted.isEmpty ? 0 : sorted[sorted.count / 2], max: sorted.last ?? 0)
    if json {
      print(JSONLine.encode(results))
    } else {
      print(
        String(
          format: "heard %d/%d; end of airtime → sighting: p50 %.0f ms, max %.0f ms",
          results.heard, rounds, results.p50, results.max))
    }
  }
}
