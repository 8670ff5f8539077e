import ArgumentParser
import AudioModem
import AudioPulse
import CommandLineSupport
import Core
import Foundation
import Logging
import NearbyTesting
import Tokens

/// K audio mediums on one shared air (a PulseAudio sink and its monitor), each transmitting a
/// fresh token of its own and listening: how long until every hearer has heard every other's
/// token, and how many of the frames on the air each hearer decoded.
struct AudioCrowdBench: AsyncParsableCommand {
  static let configuration = CommandConfiguration(
    commandName: "audio-crowd",
    abstract: "Audio crowd: K transmitters on one air; time until every hearer heard every token.",
    discussion: """
      Needs a PulseAudio server with a sink whose monitor carries what is played (`pactl \
      load-module module-null-sink sink_name=bench`): the sink is the room. Each round starts \
      K mediums that listen, then hands each a new token at once (each plays its frame at \
      once, then every 2–3 s, deferring while it hears another frame), and watches the air \
      for --timeout seconds. A round's figure is the time from the handing out until the \
      last hearer first heard the last token; a round in which some hearer missed some token \
      counts as missed. Decodes per \
      pair: the frames of one transmitter one hearer decoded, over the frames that \
      transmitter played (estimated from the 2–3 s interval: the first at once, then one \
      every 2.5 s on average), so 1 − that is the share lost to collisions and noise. This \
      is the medium's part of a find; peer resolution adds the LAN exchange (milliseconds). \
      Exits 1 when nothing at all was heard.
      """)

  @Option(help: "PulseAudio server (default: $PULSE_SERVER or the session's).") var server: String?
  @Option(help: "The sink to play into; its monitor is recorded.") var sink = "nearby"
  @Option(help: "Transmitters on the air at once, comma-separated.") var transmitters = "2,4,8"
  @Option(help: "Rounds of each.") var rounds = 5
  @Option(help: "Seconds each round is watched; a token not heard by then is missed.")
  var timeout = 12.0
  @Flag(help: "A short run for the test command: 2 transmitters, one round.") var short = false
  @Flag(help: "Print the results as one JSON object.") var json = false

  struct Row: Encodable {
    var transmitters: Int
    var rounds: Int
    /// Seconds until every hearer heard every token, per round (nil: missed).
    var allHeardSeconds: [Double?]
    /// Frames decoded per frame played, every pair of the rows' rounds together.
    var decodedShare: Double
  }

  func counts() throws -> [Int] {
    if short { return [2] }
    let counts = transmitters.split(separator: ",").compactMap {
      Int($0.trimmingCharacters(in: .whitespaces))
    }
    guard !counts.isEmpty, counts.allSatisfy({ (2...16).contains($0) }) else {
      throw ValidationError("--transmitters takes counts from 2 to 16, e.g. 2,4,8")
    }
    return counts
  }

  func validate() throws {
    _ = try counts()
    guard rounds > 0, timeout > 0 else { throw ValidationError("--rounds and --timeout > 0") }
  }

  func run() async throws {
    var logger = Logger(label: "nearby.bench")
    logger.logLevel = .warning
    let configuration = PulseAudioConfiguration(
      server: server, sink: sink, source: "\(sink).monitor")
    var rows: [Row] = []
    for count in try counts() {
      var row = Row(
        transmitters: count, rounds: short ? 1 : rounds, allHeardSeconds: [], decodedShare: 0)
      var decoded = 0
      var played = 0.0
      for round in 1...row.rounds {
        let (seconds, decodes, frames) = try await self.round(
          count, configuration: configuration, logger: logger)
        row.allHeardSeconds.append(seconds)
        decoded += decodes
        played += frames
        progress(
          "\(count) transmitters, round \(round)/\(row.rounds): "
            + (seconds.map { String(format: "every token heard in %.1f s", $0) } ?? "MISSED"))
      }
      row.decodedShare = played > 0 ? Double(decoded) / played : 0
      rows.append(row)
    }
    if json {
      print(JSONLine.encode(rows))
    } else {
      for row in rows {
        let heard = row.allHeardSeconds.compactMap { $0 }.sorted()
        print(
          String(
            format:
              "%d transmitters: every token heard in %d of %d rounds (%@ s); frames decoded %.0f %%",
            row.transmitters, heard.count, row.rounds,
            heard.map { String(format: "%.1f", $0) }.joined(separator: ", "),
            row.decodedShare * 100))
      }
    }
    guard rows.contains(where: { $0.decodedShare > 0 }) else {
      throw CommandFailure("no token played into \(sink) was heard on \(sink).monitor")
    }
  }

  /// One round of `count` mediums, watched for the whole window: the time until every
  /// hearer had heard every other's token (nil when some did not within it), the decodes of
  /// other tokens, and the frames those transmitters are expected to have played to each
  /// hearer in it.
  private func round(
    _ count: Int, configuration: PulseAudioConfiguration, logger: Logger
  ) async throws -> (Double?, Int, Double) {
    var mediums: [PulseAudioMedium] = []
    var recorders: [StreamRecorder<Sighting>] = []
    for _ in 0..<count {
      let medium = try PulseAudioMedium(configuration: configuration, logger: logger)
      recorders.append(StreamRecorder(medium.sightings))
      try await medium.startScanning()
      mediums.append(medium)
    }
    try await Task.sleep(for: .milliseconds(500))
    let tokens = (0..<count).map { _ in Token.random() }
    let start = Date()
    for (medium, token) in zip(mediums, tokens) { try await medium.transmit(token) }
    let window = short ? min(timeout, 8) : timeout
    try await Task.sleep(for: .milliseconds(Int(window * 1000)))
    for medium in mediums { await medium.shutdown() }
    var lastFirstHearing = 0.0
    var missed = false
    var decodes = 0
    for (index, recorder) in recorders.enumerated() {
      let heard = recorder.elements.filter {
        $0.token != tokens[index] && tokens.contains($0.token)
          && $0.time.timeIntervalSince(start) <= window
      }
      decodes += heard.count
      for (other, token) in tokens.enumerated() where other != index {
        guard let first = heard.first(where: { $0.token == token }) else {
          missed = true
          continue
        }
        lastFirstHearing = max(lastFirstHearing, first.time.timeIntervalSince(start))
      }
    }
    // Each transmitter's first frame at once, then one every 2.5 s on average; only frames
    // whose airtime ended in the window count, each for the count − 1 others.
    let frames = 1 + ((window - ModemParameters.airtime) / 2.5).rounded(.down)
    return (missed ? nil : lastFirstHearing, decodes, frames * Double(count * (count - 1)))
  }

  private func progress(_ text: String) {
    guard !json else { return }
    FileHandle.standardError.write(Data("… \(text)\n".utf8))
  }
}
