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
      enough for about 40 founds (at most 20). Goal: peer p50 ≤ server p50. Both modes \
      report the process's CPU time per found (every device's share, the server's too).
        steady (peer mode): every device publishes one message; once every device found \
      every other's, nothing changes for --steady-seconds, and the exchange's datagrams and \
      bytes per second on the segment and per device are reported beside the LAN \
      announcements' own (each device announces its token every 250 ms, 72 bytes sealed with the digest), \
      with the process's CPU per device.
        change (with steady): after the quiet, one device publishes a new message; the time \
      until every other device found it, beside the cold phase's found latency (the goal: \
      at most twice it).
      --announce-ms and --sighting-ms stretch the LAN medium's announce interval (default \
      250 ms) and how often it reports a token it keeps hearing (1 s): on one machine every \
      device receives every other's announcements and reports their sightings, N² a \
      second that real devices share among N machines; the exchange's traffic while \
      nothing changes does not depend on them.
      Exits 1 when a found did not arrive (not when the goal is missed).
      """)

  @Option(help: "Device counts, comma-separated.") var devices = "2,10,50"
  @Option(help: "Seconds a round may take before its missing founds are counted.")
  var timeout = 60.0
  @Option(help: "Phases, comma-separated: warm, cold, steady.") var phases = "warm,cold,steady"
  @Option(help: "Modes, comma-separated: peer, server.") var modes = "peer,server"
  @Option(help: "Seconds the steady state is measured.") var steadySeconds = 9.0
  @Option(help: "The LAN medium's announce interval, in milliseconds.") var announceMs = 250
  @Option(help: "How often the LAN medium reports a token it keeps hearing, in milliseconds.")
  var sightingMs = 1_000
  @Option(
    help: """
      Seconds between the steady phase's last found and its quiet (default: two refresh \
      intervals and a second).
      """)
  var settleSeconds: Double?
  @Flag(help: "A short run for the test command: 2 and 5 devices, one round of each phase.")
  var short = false
  @Flag(help: "Print one JSON object.") var json = false

  typealias Mode = LANPeerSegment.Mode

  /// Warm: every device publishes, each already heard by the others. Cold: a device that
  /// just joined publishes; the others hear its token for the first time.
  /// Steady: nothing changes once every device found every other's message.
  /// Change: after the steady quiet, one device publishes (measured with steady).
  enum Phase: String, Encodable, Sendable, CaseIterable {
    case warm, cold, steady, change
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
    /// The process's CPU time (user and system) per found, in milliseconds: the work of
    /// every device taking part (and the server's, in server mode).
    var cpuMillisecondsPerFound: Double?
    /// Steady phase only.
    var steady: Steady?
  }

  /// The steady state's costs: nothing changes, every device hears every other's token.
  struct Steady: Encodable {
    var seconds: Double
    /// The peer exchange, every device together (a multicast once).
    var exchangeDatagramsPerSecond: Double
    var exchangeBytesPerSecond: Double
    /// The LAN medium's token announcements, every device together (computed: one sealed
    /// 72-byte datagram, the digest in it, per device per announce interval).
    var announcementDatagramsPerSecond: Double
    var announcementBytesPerSecond: Double
    /// The exchange's bytes over the announcements' (the goal: ≤ 0.10).
    var exchangeOverAnnouncementBytes: Double
    /// The process's CPU time over the wall time, per device, in percent of one core.
    var cpuPercentPerDevice: Double
    /// From the first publish to the end of the quiet, every resolver together: datagrams
    /// dropped over a sender's or a host's rate, sends refused by a destination's byte
    /// budget or a full outbox, and refreshes that needed no question.
    var droppedOverRate: Int
    var droppedOverHostRate: Int
    var refusedSends: Int
    var localRefreshes: Int
    /// Probes of a way back and who-has to every device sent, from the first publish to the
    /// end of the quiet.
    var probes: Int
    var whoHas: Int
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

  func selectedPhases() throws -> Set<Phase> {
    let names = phases.split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) }
    let selected = names.compactMap(Phase.init(rawValue:)).filter { $0 != .change }
    guard !selected.isEmpty, selected.count == names.count else {
      throw ValidationError(
        "--phases takes warm, cold and steady (which measures a change too), comma-separated")
    }
    return Set(selected)
  }

  func selectedModes() throws -> [Mode] {
    let names = modes.split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) }
    let selected = names.compactMap(Mode.init(rawValue:))
    guard !selected.isEmpty, selected.count == names.count else {
      throw ValidationError("--modes takes peer and server, comma-separated")
    }
    return Mode.allCases.filter(selected.contains)
  }

  func validate() throws {
    _ = try counts()
    _ = try selectedModes()
    _ = try selectedPhases()
    guard timeout > 0 else { throw ValidationError("--timeout must be > 0") }
    guard steadySeconds > 0 else { throw ValidationError("--steady-seconds must be > 0") }
    guard (50...5_000).contains(announceMs) else {
      throw ValidationError("--announce-ms takes 50 to 5000 (the medium's default is 250)")
    }
    guard (100...3_000).contains(sightingMs) else {
      throw ValidationError(
        "--sighting-ms takes 100 to 3000 (the medium's default is 1000; the refresh interval is 3 s)"
      )
    }
    if let settleSeconds, settleSeconds < 0 {
      throw ValidationError("--settle-seconds must be ≥ 0")
    }
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
        for mode in try selectedModes() {
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
      serverKey: serverKey, announceInterval: .milliseconds(announceMs),
      sightingInterval: .milliseconds(sightingMs), logger: logger)
    let phases = try selectedPhases()
    do {
      for index in 0..<count {
        _ = try await segment.addDevice(subscribing: true)
        if (index + 1) % 50 == 0 { progress("\(index + 1) of \(count) devices started") }
      }
      try await Task.sleep(for: .seconds(2))
      var rows: [Row] = []
      // The steady state first: the cold phase's newcomers leave, and the devices that heard
      // them tell them so until they forget them (the hearer memory), which is not what
      // nothing changing costs.
      if phases.contains(.steady), mode == .peer {
        rows += try await steadyState(count, in: segment)
        // Every device unpublished: its hearers are told, then ask again. At 200 devices
        // that is 40 000 updates and their questions, which the next phase must not count.
        try await settle(segment, count: count)
      }
      if phases.contains(.warm) {
        rows.append(try await warmRounds(count, in: segment, mode: mode))
      }
      if phases.contains(.cold) {
        rows.append(try await coldRounds(count, in: segment, mode: mode))
      }
      await segment.shutdown()
      return rows
    } catch {
      await segment.shutdown()
      throw error
    }
  }

  /// Waits until the segment's exchange sends at most one datagram per device in a second,
  /// or ``settleSeconds`` (default 10 s) passed.
  private func settle(_ segment: LANPeerSegment, count: Int) async throws {
    let deadline = ContinuousClock.now + .seconds(settleSeconds ?? 10)
    while ContinuousClock.now < deadline {
      segment.resetCounts()
      let start = ContinuousClock.now
      try await Task.sleep(for: .seconds(1))
      let perSecond = Double(segment.sent.datagrams) / (ContinuousClock.now - start).seconds
      if perSecond <= Double(count) { return }
      progress(String(format: "settling: %.0f exchange datagrams a second", perSecond))
    }
    try await Task.sleep(for: .milliseconds(500))
  }

  /// Every device publishes, each already heard by the others, as often as ``rounds``.
  private func warmRounds(_ count: Int, in segment: LANPeerSegment, mode: Mode) async throws
    -> Row
  {
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
        for: started, each: count - 1, in: segment, prefix: "r\(round) ", timeout: timeout,
        progress: progress)
      for publication in publications { await publication.cancel() }
      // Let the unpublish traffic pass before the next round counts.
      try await Task.sleep(for: .milliseconds(500))
    }
    return warm.row(mode: mode, phase: .warm, devices: count)
  }

  /// A device that just joined publishes, as often as ``rounds``; the others hear its token
  /// for the first time.
  private func coldRounds(_ count: Int, in segment: LANPeerSegment, mode: Mode) async throws
    -> Row
  {
    var cold = Tally()
    for round in 0..<(short ? 1 : Self.rounds(foundsPerRound: count)) {
      var newcomer = segment
      let manager = try await newcomer.addDevice(subscribing: false)
      segment.resetCounts()
      newcomer.resetCounts()
      let before = await newcomer.resolverCounters()
      let text = "c\(round)"
      let started = [text: ContinuousClock.now]
      let publication = try await manager.publish(Self.message(text), params: Self.params)
      try await cold.wait(
        for: started, each: count, in: newcomer, prefix: text, timeout: timeout, progress: progress)
      progress(
        Self.countersLine(await newcomer.resolverCounters(), since: before) + "; sent by kind: "
          + newcomer.sent.kinds)
      await publication.cancel()
      await manager.shutdown()
      try await Task.sleep(for: .milliseconds(500))
    }
    return cold.row(mode: mode, phase: .cold, devices: count)
  }

  /// Every device publishes one message and finds every other's; then nothing changes for
  /// ``steadySeconds`` while the exchange's traffic and the process's CPU are counted; then
  /// one device publishes a new message (the change row).
  private func steadyState(_ count: Int, in segment: LANPeerSegment) async throws -> [Row] {
    var tally = Tally()
    var publications: [Publication] = []
    var started: [String: ContinuousClock.Instant] = [:]
    segment.resetCounts()
    let before = await segment.resolverCounters()
    for (index, manager) in segment.managers.enumerated() {
      let text = "s d\(index)"
      started[text] = .now
      publications.append(try await manager.publish(Self.message(text), params: Self.params))
    }
    try await tally.wait(
      for: started, each: count - 1, in: segment, prefix: "s ", timeout: timeout,
      progress: progress)
    // Before the quiet is counted, the answers of the last founds pass, and so do the first
    // refreshes: an owner answering a device whose token it has not resolved yet cannot say
    // it hears it, so the next refresh asks once more (two refresh intervals, then a second).
    let refresh = PeerResolverConfiguration().exchange.refreshInterval
    progress("steady, \(count) devices: founds done; the first refreshes pass, then the quiet")
    let settle = settleSeconds.map { Duration.milliseconds(Int64($0 * 1000)) }
    try await Task.sleep(for: short ? .seconds(1) : settle ?? refresh * 2 + .seconds(1))
    segment.resetCounts()
    let cpu = CPUTime.now
    let wall = ContinuousClock.now
    try await Task.sleep(for: .seconds(short ? min(steadySeconds, 3) : steadySeconds))
    let seconds = (ContinuousClock.now - wall).seconds
    let cpuSeconds = CPUTime.now - cpu
    let traffic = segment.sent
    let after = await segment.resolverCounters()
    progress(
      "steady, \(count) devices, from the publishes to the quiet's end: "
        + Self.countersLine(after, since: before) + "; the quiet's datagrams by kind: "
        + traffic.kinds)
    // A change in the steady state: what its hearers learn by the unasked update or, when that
    // is lost, by the next announcement's digest.
    var change = Tally()
    progress("steady, \(count) devices: quiet counted; one device publishes a change")
    segment.resetCounts()
    let changed = ["x change": ContinuousClock.now]
    publications.append(
      try await segment.managers[0].publish(Self.message("x change"), params: Self.params))
    try await change.wait(
      for: changed, each: count - 1, in: segment, prefix: "x ", timeout: timeout,
      progress: progress)
    for publication in publications { await publication.cancel() }
    let interval = segment.announceInterval.seconds
    let announcements = Double(count) / interval
    // Sealed with the digest beside the token: what peer mode puts on the wire.
    let announcementBytes = announcements * Double(LANMulticastConfiguration.digestAnnouncementSize)
    var row = tally.row(mode: .peer, phase: .steady, devices: count)
    row.cpuMillisecondsPerFound = nil
    row.steady = Steady(
      seconds: seconds,
      exchangeDatagramsPerSecond: Double(traffic.datagrams) / seconds,
      exchangeBytesPerSecond: Double(traffic.bytes) / seconds,
      announcementDatagramsPerSecond: announcements,
      announcementBytesPerSecond: announcementBytes,
      exchangeOverAnnouncementBytes: Double(traffic.bytes) / seconds / announcementBytes,
      cpuPercentPerDevice: cpuSeconds / seconds / Double(count) * 100,
      droppedOverRate: after.droppedRateLimited - before.droppedRateLimited,
      droppedOverHostRate: after.droppedHostRateLimited - before.droppedHostRateLimited,
      refusedSends: after.refusedSends + after.outboxOverflows - before.refusedSends
        - before.outboxOverflows,
      localRefreshes: after.localRefreshes - before.localRefreshes,
      probes: after.probes - before.probes, whoHas: after.whoHasSent - before.whoHasSent)
    return [row, change.row(mode: .peer, phase: .change, devices: count)]
  }

  /// What every resolver counted between two readings, for the progress output.
  static func countersLine(_ after: PeerCounters, since before: PeerCounters) -> String {
    "exchange: sent \(after.sent - before.sent), received \(after.received - before.received), "
      + "probes \(after.probes - before.probes), who-has \(after.whoHasSent - before.whoHasSent), "
      + "challenged \(after.challenged - before.challenged), ignored \(after.ignored - before.ignored), "
      + "hearing lapses \(after.hearingLapses - before.hearingLapses), unchanged answers "
      + "\(after.unchangedAnswers - before.unchangedAnswers), handles wanted "
      + "\(after.handlesWanted - before.handlesWanted), local refreshes "
      + "\(after.localRefreshes - before.localRefreshes), dropped over rate "
      + "\(after.droppedRateLimited - before.droppedRateLimited), stale "
      + "\(after.droppedStale - before.droppedStale), replayed "
      + "\(after.droppedReplayed - before.droppedReplayed), refused sends "
      + "\(after.refusedSends + after.outboxOverflows - before.refusedSends - before.outboxOverflows)"
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
        var steadyGoal: String
        var steadyGoalMet: Bool?
        var changeGoal: String
        /// The change's slowest found over the cold p50, by device count.
        var changeOverCold: [String: Double]
      }
      print(
        JSONLine.encode(
          Output(
            rows: rows, goal: "peer p50 <= server p50", goalMet: Self.goalMet(rows),
            steadyGoal: Self.steadyGoal, steadyGoalMet: Self.steadyGoalMet(rows),
            changeGoal: "a change's slowest found <= 2 × the cold phase's p50",
            changeOverCold: Dictionary(
              uniqueKeysWithValues: Set(rows.map(\.devices)).compactMap { count in
                Self.changeOverCold(rows, count).map { ("\(count)", $0) }
              }))))
      return
    }
    for row in rows { print(Self.line(row)) }
    if let met = Self.steadyGoalMet(rows) {
      print("steady: \(Self.steadyGoal): \(met ? "met" : "NOT met")")
    }
    for count in Set(rows.map(\.devices)).sorted() {
      guard let ratio = Self.changeOverCold(rows, count) else { continue }
      print(
        String(
          format: "change, %d devices: slowest found %.2f× the cold phase's p50 (goal ≤ 2: %@)",
          count, ratio, ratio <= 2 ? "met" : "NOT met"))
    }
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

  static let steadyGoal = "exchange bytes <= 10 % of the announcements' at 50 devices and more"

  /// The change row's slowest found over the cold row's p50 at `count` devices, peer mode.
  static func changeOverCold(_ rows: [Row], _ count: Int) -> Double? {
    let pick = { (phase: Phase) in
      rows.first { $0.devices == count && $0.phase == phase && $0.mode == .peer }
    }
    guard let change = pick(.change), let cold = pick(.cold), change.missing == 0,
      cold.p50Milliseconds > 0
    else { return nil }
    return change.maxMilliseconds / cold.p50Milliseconds
  }

  static func pair(_ rows: [Row], _ count: Int, _ phase: Phase) -> (Row, Row)? {
    let pick = { (mode: Mode) in
      rows.first { $0.devices == count && $0.phase == phase && $0.mode == mode }
    }
    guard let peer = pick(.peer), let server = pick(.server) else { return nil }
    return (peer, server)
  }

  static func goalMet(_ rows: [Row]) -> Bool {
    rows.filter { $0.phase == .warm || $0.phase == .cold }.allSatisfy { row in
      guard let (peer, server) = pair(rows, row.devices, row.phase) else { return false }
      return peer.p50Milliseconds <= server.p50Milliseconds
    }
  }

  /// The steady goal, at 50 devices and more: the exchange's bytes at most 10 % of the
  /// announcements'. `nil` when no such row was measured.
  static func steadyGoalMet(_ rows: [Row]) -> Bool? {
    let judged = rows.compactMap { $0.devices >= 50 ? $0.steady : nil }
    return judged.isEmpty ? nil : judged.allSatisfy { $0.exchangeOverAnnouncementBytes <= 0.10 }
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
    if let cpu = row.cpuMillisecondsPerFound {
      text += String(format: "; CPU %.2f ms per found", cpu)
    }
    if let steady = row.steady {
      let devices = Double(row.devices)
      text += String(
        format:
          "; steady %.0f s: exchange %.1f datagrams/s, %.0f B/s (per device %.2f/s, %.0f B/s) "
          + "against announcements %.0f/s, %.0f B/s: %.2f× their bytes; CPU %.2f %% per device",
        steady.seconds, steady.exchangeDatagramsPerSecond, steady.exchangeBytesPerSecond,
        steady.exchangeDatagramsPerSecond / devices, steady.exchangeBytesPerSecond / devices,
        steady.announcementDatagramsPerSecond, steady.announcementBytesPerSecond,
        steady.exchangeOverAnnouncementBytes, steady.cpuPercentPerDevice)
      text +=
        "; dropped over a sender's rate \(steady.droppedOverRate), a host's "
        + "\(steady.droppedOverHostRate); sends refused \(steady.refusedSends); "
        + "local refreshes \(steady.localRefreshes); probes \(steady.probes), who-has "
        + "\(steady.whoHas)"
    }
    return text
  }

  static func percentile(_ sorted: [Double], _ fraction: Double) -> Double {
    guard !sorted.isEmpty else { return .nan }
    return sorted[min(sorted.count - 1, Int((Double(sorted.count) * fraction).rounded(.up)) - 1)]
  }

  private func progress(_ text: String) {
    guard !json else { return }
    StandardStreams.error("… \(text)\n")
  }
}

/// The process's CPU time so far (user and system), in seconds.
enum CPUTime {
  static var now: Double {
    var usage = rusage()
    getrusage(RUSAGE_SELF.rawValue, &usage)
    let user = Double(usage.ru_utime.tv_sec) + Double(usage.ru_utime.tv_usec) / 1e6
    let system = Double(usage.ru_stime.tv_sec) + Double(usage.ru_stime.tv_usec) / 1e6
    return user + system
  }

}

/// The founds of one phase: latencies from each publish to each found, what was missing, and
/// the peer exchange's traffic while they were found.
private struct Tally {
  var latencies: [Double] = []
  var missing = 0
  var sent = CountingPeerTransport.Totals()
  var cpuSeconds = 0.0

  /// Waits (at most `timeout` seconds) until each message of `started` was found `each`
  /// times, then adds the latencies, the missing and the segment's traffic. Says how far it
  /// got every 5 s.
  mutating func wait(
    for started: [String: ContinuousClock.Instant], each: Int, in segment: LANPeerSegment,
    prefix: String, timeout: Double, progress: (String) -> Void
  ) async throws {
    let expected = started.count * each
    let begun = ContinuousClock.now
    let deadline = begun + .seconds(timeout)
    var told = begun
    let cpu = CPUTime.now
    while case let found = segment.founds.count(prefix: prefix), found < expected,
      ContinuousClock.now < deadline
    {
      if ContinuousClock.now - told >= .seconds(5) {
        told = .now
        progress(
          "\(found) of \(expected) founds after \(Int((told - begun).seconds)) s "
            + "(at most \(Int(timeout)) s)")
      }
      try await Task.sleep(for: .milliseconds(2))
    }
    cpuSeconds += CPUTime.now - cpu
    let traffic = segment.sent
    sent.datagrams += traffic.datagrams
    sent.bytes += traffic.bytes
    var found = 0
    for (text, start) in started {
      for instant in segment.founds.instants(of: text) {
        latencies.append((instant - start).seconds * 1000)
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
      bytesPerFound: mode == .peer && founds > 0 ? Double(sent.bytes) / Double(founds) : nil,
      cpuMillisecondsPerFound: founds > 0 ? cpuSeconds * 1000 / Double(founds) : nil)
  }
}
