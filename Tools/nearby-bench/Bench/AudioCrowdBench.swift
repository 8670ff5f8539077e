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
/// token of its own and listening: how long until every other medium has heard a newcomer's
/// token, and how many of the frames on the air each hearer decoded.
struct AudioCrowdBench: AsyncParsableCommand {
  static let configuration = CommandConfiguration(
    commandName: "audio-crowd",
    abstract: "Audio crowd: K transmitters on one air; time until all hear a newcomer's token.",
    discussion: """
      Needs a PulseAudio server with a sink whose monitor carries what is played (`pactl \
      load-module module-null-sink sink_name=bench`): the sink is the room. Each round starts \
      K mediums that listen; K − 1 of them transmit tokens of their own for 3 s (each plays \
      a frame at once, then every 2–3 s, deferring while it hears another frame), then the \
      last one, the newcomer, gets its token, and the air is watched for --timeout seconds. \
      A round's figure is the time from the newcomer's token until the last of the others \
      first heard it; a round in which one of them did not counts as missed. Decodes per \
      pair and second: the frames of one transmitter one hearer decoded in the window, over \
      every ordered pair; a transmitter alone on the air plays one frame every 2.5 s on \
      average, so 0.4 a second is what no collision and no deferral would give. This \
      is the medium's part of a find; peer resolution adds the LAN exchange (milliseconds). \
      Gaps: for each hearer and each transmitter of the room, the longest time in the window \
      without a decode of it (from the window's start, between decodes, to its end); a pair \
      whose gap passed 10 s (the default lostAfter) would have lost the token. --pace \
      answered sets the room's tokens answered (TransmitPace, as peer resolution does once \
      hearers asked) for hearers whose lostAfter is 30 s: a frame every 4-5 s (at 10 s the \
      medium would not slow down); the newcomer's token is new, so seeking. Exits 1 when nothing at all was heard.
      """)

  @Option(help: "PulseAudio server (default: $PULSE_SERVER or the session's).") var server: String?
  @Option(help: "The sink to play into; its monitor is recorded.") var sink = "nearby"
  @Option(help: "Transmitters on the air at once, comma-separated.") var transmitters = "2,4,8"
  @Option(help: "Rounds of each.") var rounds = 5
  @Option(help: "Seconds each round is watched; a token not heard by then is missed.")
  var timeout = 12.0
  @Option(help: "The room's pace: seeking (a frame every 2-3 s) or answered (4-5 s).")
  var pace = "seeking"
  @Flag(help: "A short run for the test command: 2 transmitters, one round.") var short = false
  @Flag(help: "Print the results as one JSON object.") var json = false

  struct Row: Encodable {
    var transmitters: Int
    var rounds: Int
    /// Seconds until every other medium heard the newcomer's token, per round (nil: missed).
    var allHeardSeconds: [Double?]
    /// Frames decoded per ordered pair (hearer, transmitter) and second of the window,
    /// every round together (about 0.4 with nothing lost).
    var decodesPerPairPerSecond: Double
    var pace: String
    /// Pairs (hearer, transmitter of the room) watched, every round together, and those whose
    /// longest time without a decode passed 10 s.
    var pairs: Int
    var pairsPast10Seconds: Int
    /// The longest time without a decode over every pair and round, in seconds.
    var longestGapSeconds: Double
  }

  /// What one round gave.
  struct Outcome {
    var allHeard: Double?
    var decodes: Int
    var window: Double
    var gaps: [Double]
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
    guard ["seeking", "answered"].contains(pace) else {
      throw ValidationError("--pace is seeking or answered")
    }
  }

  func run() async throws {
    var logger = Logger(label: "nearby.bench")
    logger.logLevel = .warning
    let configuration = PulseAudioConfiguration(
      server: server, sink: sink, source: "\(sink).monitor")
    var rows: [Row] = []
    for count in try counts() {
      var row = Row(
        transmitters: count, rounds: short ? 1 : rounds, allHeardSeconds: [],
        decodesPerPairPerSecond: 0, pace: pace, pairs: 0, pairsPast10Seconds: 0,
        longestGapSeconds: 0)
      var decoded = 0
      var pairSeconds = 0.0
      for round in 1...row.rounds {
        let outcome = try await self.round(count, configuration: configuration, logger: logger)
        let seconds = outcome.allHeard
        row.allHeardSeconds.append(seconds)
        decoded += outcome.decodes
        pairSeconds += outcome.window * Double(count * (count - 1))
        row.pairs += outcome.gaps.count
        row.pairsPast10Seconds += outcome.gaps.filter { $0 > 10 }.count
        row.longestGapSeconds = max(row.longestGapSeconds, outcome.gaps.max() ?? 0)
        progress(
          "\(count) transmitters, round \(round)/\(row.rounds): "
            + (seconds.map { String(format: "the newcomer heard by all in %.1f s", $0) }
              ?? "MISSED"))
      }
      row.decodesPerPairPerSecond = pairSeconds > 0 ? Double(decoded) / pairSeconds : 0
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
              "%d transmitters, room %@: the newcomer heard by all in %d of %d rounds (%@ s); "
              + "decodes per pair %.2f/s (%.2f with none lost); %d of %d pairs went "
              + "over 10 s without a decode (longest %.1f s)",
            row.transmitters, row.pace, heard.count, row.rounds,
            heard.map { String(format: "%.1f", $0) }.joined(separator: ", "),
            row.decodesPerPairPerSecond, row.pace == "answered" ? 1 / 4.5 : 1 / 2.5,
            row.pairsPast10Seconds, row.pairs,
            row.longestGapSeconds))
      }
    }
    guard rows.contains(where: { $0.decodesPerPairPerSecond > 0 }) else {
      throw CommandFailure("no token played into \(sink) was heard on \(sink).monitor")
    }
  }

  /// One round of `count` mediums: `count` − 1 transmit for a few seconds first (the room),
  /// then the newcomer gets its token; the time until every other medium first heard the
  /// newcomer's token (nil when one did not within the window), the decodes of other tokens
  /// in the window, and the window's length in seconds.
  private func round(
    _ count: Int, configuration: PulseAudioConfiguration, logger: Logger
  ) async throws -> Outcome {
    var mediums: [PulseAudioMedium] = []
    var recorders: [StreamRecorder<Sighting>] = []
    for _ in 0..<count {
      let medium = try PulseAudioMedium(configuration: configuration, logger: logger)
      recorders.append(StreamRecorder(medium.sightings))
      try await medium.startScanning()
      mediums.append(medium)
    }
    let tokens = (0..<count).map { _ in Token.random() }
    // The room: everyone but the newcomer (index 0) on the air, their frames spread out.
    for index in 1..<count {
      try await mediums[index].transmit(tokens[index])
      if pace == "answered" {
        await mediums[index].setPace(.answered(refreshWithin: .seconds(30)), for: tokens[index])
      }
    }
    try await Task.sleep(for: .seconds(3))
    let start = Date()
    try await mediums[0].transmit(tokens[0])
    let window = short ? min(timeout, 8) : timeout
    try await Task.sleep(for: .milliseconds(Int(window * 1000)))
    for medium in mediums { await medium.shutdown() }
    var newcomerHeard: [Double] = []
    var decodes = 0
    var gaps: [Double] = []
    for (index, recorder) in recorders.enumerated() {
      let heard = recorder.elements.filter {
        let offset = $0.time.timeIntervalSince(start)
        return $0.token != tokens[index] && tokens.contains($0.token) && offset >= 0
          && offset <= window
      }
      decodes += heard.count
      if index > 0, let first = heard.first(where: { $0.token == tokens[0] }) {
        newcomerHeard.append(first.time.timeIntervalSince(start))
      }
      for transmitter in 1..<count where transmitter != index {
        let times = heard.filter { $0.token == tokens[transmitter] }.map {
          $0.time.timeIntervalSince(start)
        }
        gaps.append(zip(times + [window], [0] + times).map { $0 - $1 }.max() ?? window)
      }
    }
    let everyone = newcomerHeard.count == count - 1
    return Outcome(
      allHeard: everyone ? newcomerHeard.max() : nil, decodes: decodes, window: window,
      gaps: gaps)
  }

  private func progress(_ text: String) {
    guard !json else { return }
    StandardStreams.error("… \(text)\n")
  }
}
