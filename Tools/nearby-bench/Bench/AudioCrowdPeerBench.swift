import ArgumentParser
import AudioPulse
import CommandLineSupport
import Core
import Foundation
import LANMulticast
import Logging
import PeerResolution
import Strategy
import Synchronization

/// The audio crowd end to end: K managers on one air (a PulseAudio sink and its monitor), each
/// with a peer resolver whose transport is the LAN on lo and whose only medium is audio, no
/// server. K − 1 subscribe (the room, transmitting their tokens), then one publishes: how long
/// until every subscriber found it, and whether they keep it.
struct AudioCrowdPeerBench: AsyncParsableCommand {
  static let configuration = CommandConfiguration(
    commandName: "audio-crowd-peer",
    abstract: "Audio crowd with peer resolution: a publish found by every subscriber on one air.",
    discussion: """
      Needs a PulseAudio server with a sink whose monitor carries what is played (`pactl \
      load-module module-null-sink sink_name=bench`): the sink is the room. Each round starts \
      K managers, each with a peer resolver (its transport the LAN on lo, one group for the \
      round; its only medium audio): K − 1 subscribe with the default strategy (broadcast and \
      scan: each plays its token, every 2–3 s, deferring while it hears another frame) for \
      3 s, then the last publishes a message with the default strategy. A round's figure is \
      the time from the publish until the last subscriber's onFound (the issue's goals: \
      within 3 s with 4 transmitters, 5 s with 8, 4 s for a pair and one more, every round); \
      a round in which one did not find it within --timeout counts as missed. Then the room \
      is watched --hold seconds more: a lost of the publication there is a flap (its \
      publisher is still on the air). Exits 1 when no round found anything.
      """)

  @Option(help: "PulseAudio server (default: $PULSE_SERVER or the session's).") var server: String?
  @Option(help: "The sink to play into; its monitor is recorded.") var sink = "nearby"
  @Option(help: "Managers on the air at once (the publisher among them), comma-separated.")
  var transmitters = "2,3,4,8"
  @Option(help: "Rounds of each.") var rounds = 5
  @Option(help: "Seconds a round waits for every subscriber to find the publication.")
  var timeout = 15.0
  @Option(help: "Seconds the room is watched for flaps after the founds.") var hold = 15.0
  @Flag(help: "A short run for the test command: 2 managers, one round, a short hold.")
  var short = false
  @Flag(help: "Print the results as one JSON object.") var json = false

  struct Row: Encodable {
    var transmitters: Int
    var rounds: Int
    /// Seconds from the publish until every subscriber found it, per round (nil: missed).
    var allFoundSeconds: [Double?]
    /// Lost events of the publication while its publisher stayed on the air, every round
    /// together, and the subscriber-seconds they were watched over.
    var flaps: Int
    var watchedSubscriberSeconds: Double
  }

  func counts() throws -> [Int] {
    if short { return [2] }
    let counts = transmitters.split(separator: ",").compactMap {
      Int($0.trimmingCharacters(in: .whitespaces))
    }
    guard !counts.isEmpty, counts.allSatisfy({ (2...16).contains($0) }) else {
      throw ValidationError("--transmitters takes counts from 2 to 16, e.g. 2,3,4,8")
    }
    return counts
  }

  func validate() throws {
    _ = try counts()
    guard rounds > 0, timeout > 0, hold >= 0 else {
      throw ValidationError("--rounds and --timeout must be > 0, --hold ≥ 0")
    }
  }

  func run() async throws {
    var logger = Logger(label: "nearby.bench")
    logger.logLevel = .warning
    let audio = PulseAudioConfiguration(server: server, sink: sink, source: "\(sink).monitor")
    var rows: [Row] = []
    for count in try counts() {
      var row = Row(
        transmitters: count, rounds: short ? 1 : rounds, allFoundSeconds: [], flaps: 0,
        watchedSubscriberSeconds: 0)
      for round in 1...row.rounds {
        let outcome = try await self.round(count, audio: audio, logger: logger)
        row.allFoundSeconds.append(outcome.allFound)
        row.flaps += outcome.flaps
        row.watchedSubscriberSeconds += outcome.watched
        progress(
          "\(count) managers, round \(round)/\(row.rounds): "
            + (outcome.allFound.map { String(format: "found by every subscriber in %.1f s", $0) }
              ?? "MISSED (\(outcome.founds) of \(count - 1) found)")
            + ", \(outcome.flaps) flaps")
      }
      rows.append(row)
    }
    if json {
      print(JSONLine.encode(rows))
    } else {
      for row in rows {
        let found = row.allFoundSeconds.compactMap { $0 }.sorted()
        print(
          String(
            format: "%d managers: found by every subscriber in %d of %d rounds (%@ s); "
              + "%d flaps over %.0f subscriber-seconds",
            row.transmitters, found.count, row.rounds,
            found.map { String(format: "%.1f", $0) }.joined(separator: ", "), row.flaps,
            row.watchedSubscriberSeconds))
      }
    }
    guard rows.contains(where: { $0.allFoundSeconds.contains { $0 != nil } }) else {
      throw CommandFailure("no subscriber found a publication played into \(sink)")
    }
  }

  /// What one round gave.
  struct Outcome {
    /// Seconds until the last subscriber found the publication; nil when one did not.
    var allFound: Double?
    var founds: Int
    var flaps: Int
    var watched: Double
  }

  /// What the subscribers of a round saw, by the time it happened.
  final class Seen: Sendable {
    private let state = Mutex<(found: [Int: ContinuousClock.Instant], lost: Int)>(([:], 0))
    func found(_ subscriber: Int) {
      state.withLock { if $0.found[subscriber] == nil { $0.found[subscriber] = .now } }
    }
    func lost() { state.withLock { $0.lost += 1 } }
    var founds: [Int: ContinuousClock.Instant] { state.withLock { $0.found } }
    var losts: Int { state.withLock { $0.lost } }
  }

  private func round(_ count: Int, audio: PulseAudioConfiguration, logger: Logger) async throws
    -> Outcome
  {
    // A project and a group of their own, so an earlier round's stragglers are another's.
    let apiKey = "bench-crowd-\(UUID().uuidString)"
    let group = UInt16.random(in: 10_000...19_999)
    var resolvers: [PeerResolver] = []
    var managers: [MessageManager] = []
    for _ in 0..<count {
      let assembly = try await PeerResolver.assemble(
        [
          PeerCarrier.lan(
            medium: nil, transport: LANPeerConfiguration(groupPort: group, interface: "lo"))
        ],
        otherMediums: [.pulseAudio(audio)], logger: logger)
      guard assembly.failures.isEmpty else {
        throw CommandFailure("the LAN peer transport did not open on lo: \(assembly.failures)")
      }
      resolvers.append(assembly.resolver)
      managers.append(
        try await MessageManager(
          apiKey: apiKey,
          configuration: .init(
            resolver: .peer(assembly.resolver), mediums: assembly.mediums, logger: logger)))
    }
    let text = "crowd \(UUID().uuidString.prefix(8))"
    let seen = Seen()
    var subscriptions: [Subscription] = []
    for index in 1..<count {
      subscriptions.append(
        try await managers[index].subscribe(
          onFound: { message in if message.text == text { seen.found(index) } },
          onLost: { message in if message.text == text { seen.lost() } }
        ) { $0.type = "crowd" })
    }
    try await Task.sleep(for: .seconds(3))
    let published = ContinuousClock.now
    let publication = try await managers[0].publish(Message(text: text, type: "crowd"))
    let deadline = published + .milliseconds(Int(timeout * 1000))
    while seen.founds.count < count - 1, ContinuousClock.now < deadline {
      try await Task.sleep(for: .milliseconds(20))
    }
    let founds = seen.founds
    let allFound =
      founds.count == count - 1
      ? founds.values.max().map { seconds($0 - published) } : nil
    let holdFor = short ? min(hold, 4) : hold
    let lostBefore = seen.losts
    try await Task.sleep(for: .milliseconds(Int(holdFor * 1000)))
    let flaps = seen.losts - lostBefore
    await publication.cancel()
    for subscription in subscriptions { await subscription.cancel() }
    await withTaskGroup(of: Void.self) { group in
      for manager in managers { group.addTask { await manager.shutdown() } }
    }
    for resolver in resolvers { await resolver.shutdown() }
    return Outcome(
      allFound: allFound, founds: founds.count, flaps: flaps,
      watched: holdFor * Double(count - 1))
  }

  private func seconds(_ duration: Duration) -> Double {
    Double(duration / .milliseconds(1)) / 1000
  }

  private func progress(_ text: String) {
    guard !json else { return }
    StandardStreams.error("… \(text)\n")
  }
}
