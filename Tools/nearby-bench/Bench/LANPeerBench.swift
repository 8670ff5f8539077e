import ArgumentParser
import CommandLineSupport
import Core
import Foundation
import LANMulticast
import Logging
import PeerResolution
import ResolverClient
import ServerStorage
import Strategy
import Synchronization

/// `nearby bench lan-peer`: publish → found over the LAN medium on loopback, peer resolution
/// against the resolver server in the same run, and what the peer exchange costs as the
/// segment grows.
struct LANPeerBench: AsyncParsableCommand {
  static let configuration = CommandConfiguration(
    commandName: "lan-peer",
    abstract: "LAN publish → found: peer resolution against the server, 2 to 50 devices.",
    discussion: """
      Runs N devices in this process (managers with the LAN medium on lo, one port for all), \
      each subscribed to the bench's type. In peer mode each has its own peer resolver over \
      its own LAN peer transport (UDP on lo: what two machines would do, minus the wire); in \
      server mode all use a resolver server in this process (SQLite, loopback HTTP). After a \
      2 s warm-up (every device hears every token):
        warm: each round every device publishes one message (N × (N − 1) founds);
        cold: each round a new device joins and publishes (N founds), heard for the first \
      time, then leaves.
      A found is timed from its publisher's publish() call to the subscriber's found \
      handler. Peer mode also counts the peer exchange's datagrams and bytes sent (a \
      multicast once) from the round's first publish to its last found, per found. Rounds: \
      enough for about 40 founds (at most 20). Goal: peer p50 ≤ server p50. Exits \
      1 when a found did not arrive (not when the goal is missed).
      """)

  @Option(help: "Device counts, comma-separated.") var devices = "2,10,50"
  @Option(help: "Seconds a round may take before its missing founds are counted.")
  var timeout = 60.0
  @Flag(help: "A short run for the test command: 2 and 5 devices, one round of each phase.")
  var short = false
  @Flag(help: "Print one JSON object.") var json = false

  typealias Mode = LANPeerSegment.Mode

  /// Warm: every device publishes, each already heard by the others. Cold: a device that
  /// just joined publishes; the others hear its token for the first time.
  enum Phase: String, Encodable, Sendable {
    case warm, cold
  }

  /// The figures of one mode and phase at one size.
  struct Row: Encodable {
    var mode: Mode
    var phase: Phase
    var devices: Int
    var founds: Int
    var missing: Int
    var p50Milliseconds: Double
    var p95Milliseconds: Double
    var maxMilliseconds: Double
    /// Peer mode only (the server's HTTP is not counted).
    var datagramsPerFound: Double?
    var bytesPerFound: Double?
  }

  func counts() throws -> [Int] {
    if short { return [2, 5] }
    let counts = devices.split(separator: ",").compactMap {
      Int($0.trimmingCharacters(in: .whitespaces))
    }
    guard !counts.isEmpty, counts.allSatisfy({ (2...200).contains($0) }) else {
      throw ValidationError("--devices takes counts from 2 to 200, comma-separated")
    }
    return counts
  }

  func validate() throws {
    _ = try counts()
    guard timeout > 0 else { throw ValidationError("--timeout must be > 0") }
  }

  func run() async throws {
    var logger = Logger(label: "nearby.bench")
    // The server's shutdown logs the cancelled listener as an error; nothing to see here.
    logger.logLevel = .critical
    let folder = FileManager.default.temporaryDirectory
      .appendingPathComponent("nearby-bench-\(UUID().uuidString)")
    try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
    defer { try? FileManager.default.removeItem(at: folder) }
    let storage = try await StorageLocation.sqlite(
      path: folder.appendingPathComponent("bench.sqlite").path
    ).open(logger: logger)
    let key = try await storage.transaction { store in
      try store.apiKeys.createAPIKey(project: "bench", role: .admin, label: "bench", now: Date())
        .key
    }
    let server = try await BenchServer.start(storage: storage, logger: logger)
    progress("server on 127.0.0.1:\(server.port)")
    var rows: [Row] = []
    do {
      for count in try counts() {
        for mode in Mode.allCases {
          for row in try await measure(
            count, mode: mode, serverKey: key, serverPort: server.port, logger: logger)
          {
            rows.append(row)
            progress(Self.line(row))
          }
        }
      }
    } catch {
      await server.stop()
      throw error
    }
    await server.stop()
    report(rows)
    let missing = rows.reduce(0) { $0 + $1.missing }
    if missing > 0 {
      throw CommandFailure("\(missing) founds did not arrive within \(timeout) s (above)")
    }
  }

  /// One mode at one size: the devices, the warm-up, the warm rounds (every device
  /// publishes), the cold rounds (a newcomer publishes), the teardown.
  private func measure(
    _ count: Int, mode: Mode, serverKey: String, serverPort: Int, logger: Logger
  ) async throws -> [Row] {
    var segment = LANPeerSegment(
      mode: mode, serverURL: URL(string: "http://127.0.0.1:\(serverPort)")!,
      serverKey: serverKey, logger: logger)
    do {
      for _ in 0..<count { _ = try await segment.addDevice(subscribing: true) }
      try await Task.sleep(for: .seconds(2))
      var warm = Tally()
      for round in 0..<(short ? 1 : Self.rounds(foundsPerRound: count * (count - 1))) {
        segment.resetCounts()
        var publications: [Publication] = []
        var started: [String: ContinuousClock.Instant] = [:]
        for (index, manager) in segment.managers.enumerated() {
          let text = "r\(round) d\(index)"
          started[text] = .now
          publications.append(try await manager.publish(Self.message(text), params: Self.params))
        }
        try await warm.wait(
          for: started, each: count - 1, in: segment, prefix: "r\(round) ", timeout: timeout)
        for publication in publications { await publication.cancel() }
        // Let the unpublish traffic pass before the next round counts.
        try await Task.sleep(for: .milliseconds(500))
      }
      var cold = Tally()
      for round in 0..<(short ? 1 : Self.rounds(foundsPerRound: count)) {
        var newcomer = segment
        let manager = try await newcomer.addDevice(subscribing: false)
        segment.resetCounts()
        newcomer.resetCounts()
        let text = "c\(round)"
        let started = [text: ContinuousClock.now]
        let publication = try await manager.publish(Self.message(text), params: Self.params)
        try await cold.wait(
          for: started, each: count, in: newcomer, prefix: text, timeout: timeout)
        await publication.cancel()
        await manager.shutdown()
        try await Task.sleep(for: .milliseconds(500))
      }
      await segment.shutdown()
      return [
        warm.row(mode: mode, phase: .warm, devices: count),
        cold.row(mode: mode, phase: .cold, devices: count),
      ]
    } catch {
      await segment.shutdown()
      throw error
    }
  }

  static func message(_ text: String) -> Message { Message(text: text, type: "bench") }

  static var params: PublicationParams {
    var params = PublicationParams()
    params.strategy = Strategy(mediums: .lan)
    return params
  }

  /// Rounds for about 40 founds, at most 20.
  static func rounds(foundsPerRound: Int) -> Int {
    min(20, max(1, (40 + foundsPerRound - 1) / foundsPerRound))
  }

  private func report(_ rows: [Row]) {
    if json {
      struct Output: Encodable {
        var rows: [Row]
        var goal: String
        var goalMet: Bool
      }
      print(
        JSONLine.encode(
          Output(rows: rows, goal: "peer p50 <= server p50", goalMet: Self.goalMet(rows))))
      return
    }
    for row in rows { print(Self.line(row)) }
    for phase in [Phase.warm, .cold] {
      for count in Set(rows.map(\.devices)).sorted() {
        guard let (peer, server) = Self.pair(rows, count, phase) else { continue }
        print(
          String(
            format:
              "%@, %d devices: peer p50 %.1f ms, server p50 %.1f ms (goal peer p50 ≤ server p50: %@)",
            phase.rawValue, count, peer.p50Milliseconds, server.p50Milliseconds,
            peer.p50Milliseconds <= server.p50Milliseconds ? "met" : "NOT met"))
      }
    }
  }

  static func pair(_ rows: [Row], _ count: Int, _ phase: Phase) -> (Row, Row)? {
    let pick = { (mode: Mode) in
      rows.first { $0.devices == count && $0.phase == phase && $0.mode == mode }
    }
    guard let peer = pick(.peer), let server = pick(.server) else { return nil }
    return (peer, server)
  }

  static func goalMet(_ rows: [Row]) -> Bool {
    rows.allSatisfy { row in
      guard let (peer, server) = pair(rows, row.devices, row.phase) else { return false }
      return peer.p50Milliseconds <= server.p50Milliseconds
    }
  }

  static func line(_ row: Row) -> String {
    var text = String(
      format: "%@ %@, %d devices: publish → found p50 %.1f ms, p95 %.1f ms, max %.1f ms; %d founds",
      row.mode.rawValue, row.phase.rawValue, row.devices, row.p50Milliseconds, row.p95Milliseconds,
      row.maxMilliseconds, row.founds)
    if row.missing > 0 { text += ", \(row.missing) MISSING" }
    if let datagrams = row.datagramsPerFound, let bytes = row.bytesPerFound {
      text += String(format: "; %.1f datagrams and %.0f bytes per found", datagrams, bytes)
    }
    return text
  }

  static func percentile(_ sorted: [Double], _ fraction: Double) -> Double {
    guard !sorted.isEmpty else { return .nan }
    return sorted[min(sorted.count - 1, Int((Double(sorted.count) * fraction).rounded(.up)) - 1)]
  }

  private func progress(_ text: String) {
    guard !json else { return }
    FileHandle.standardError.write(Data("… \(text)\n".utf8))
  }
}

/// The founds of one phase: latencies from each publish to each found, what was missing, and
/// the peer exchange's traffic while they were found.
private struct Tally {
  var latencies: [Double] = []
  var missing = 0
  var sent = CountingPeerTransport.Totals()

  /// Waits (at most `timeout` seconds) until each message of `started` was found `each`
  /// times, then adds the latencies, the missing and the segment's traffic.
  mutating func wait(
    for started: [String: ContinuousClock.Instant], each: Int, in segment: LANPeerSegment,
    prefix: String, timeout: Double
  ) async throws {
    let expected = started.count * each
    let deadline = ContinuousClock.now + .seconds(timeout)
    while segment.founds.count(prefix: prefix) < expected, ContinuousClock.now < deadline {
      try await Task.sleep(for: .milliseconds(2))
    }
    let traffic = segment.sent
    sent.datagrams += traffic.datagrams
    sent.bytes += traffic.bytes
    var found = 0
    for (text, start) in started {
      for instant in segment.founds.instants(of: text) {
        let elapsed = (instant - start).components
        latencies.append(Double(elapsed.seconds) * 1000 + Double(elapsed.attoseconds) / 1e15)
        found += 1
      }
    }
    missing += max(0, expected - found)
  }

  func row(mode: LANPeerBench.Mode, phase: LANPeerBench.Phase, devices: Int) -> LANPeerBench.Row {
    let sorted = latencies.sorted()
    let founds = sorted.count
    return LANPeerBench.Row(
      mode: mode, phase: phase, devices: devices, founds: founds, missing: missing,
      p50Milliseconds: LANPeerBench.percentile(sorted, 0.50),
      p95Milliseconds: LANPeerBench.percentile(sorted, 0.95),
      maxMilliseconds: sorted.last ?? .nan,
      datagramsPerFound: mode == .peer && founds > 0
        ? Double(sent.datagrams) / Double(founds) : nil,
      bytesPerFound: mode == .peer && founds > 0 ? Double(sent.bytes) / Double(founds) : nil)
  }
}
