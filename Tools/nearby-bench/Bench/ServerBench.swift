import CommandLineSupport
import ArgumentParser
import Foundation
import Logging
import NearbyServer
import Resolution
import ServerStorage

/// `nearby bench server`: wrk against `report` (sightings from many simulated devices) and
/// against `/healthz` on the same server, and on PostgreSQL pgbench's tpcb-like transaction on
/// the same database, one after the other in one run; with `--instances 2`, two server
/// processes on one database as well.
struct ServerBench: AsyncParsableCommand {
  static let configuration = CommandConfiguration(
    commandName: "server",
    abstract: "Report throughput and latency under wrk, next to /healthz and pgbench.",
    discussion: """
      Starts a resolver server in this process (SQLite in a temporary folder, or --database), \
      registers --devices devices that each publish a message and subscribe, then runs wrk \
      (Debian package 'wrk') for --seconds against GET /healthz and against \
      POST /v1/devices/{id}/report, each report carrying --sightings sightings of other \
      devices' tokens. On PostgreSQL it then runs `pgbench -b tpcb-like` (scale \
      --pgbench-scale, --connections clients) on the same database, in tables it creates \
      and drops. Prints requests/s, p50/p99 latency and the ratios report/healthz and \
      report/pgbench.

      With --instances N (N ≥ 2, PostgreSQL only) the servers are N nearby-server processes \
      (built beside nearby-bench) on the one database: report is measured on the first alone, \
      then on all N at once (wrk's connections spread over them), and --samples times a found \
      caused by a report on the first instance reaching an event stream open on the second.

      Exits 1 when a request answers other than 2xx or no found crosses the instances (the \
      figures would be of failures), not when a goal is missed.
      """)

  @Option(
    name: .long, help: "postgres://… to measure PostgreSQL (default: a temporary SQLite file).")
  var database: String?
  @Option(name: .customLong("devices"), help: "Simulated devices.") var devicesOption = 1000
  @Option(name: .long, help: "Sightings per report.") var sightings = 3
  @Option(name: .customLong("connections"), help: "wrk connections (and pgbench clients).")
  var connectionsOption = 64
  @Option(name: .long, help: "wrk threads (and pgbench threads).") var threads = 2
  @Option(name: .customLong("seconds"), help: "Seconds per measurement.") var secondsOption = 10
  @Option(name: .long, help: "Server processes on the one database (PostgreSQL only).")
  var instances = 1
  @Option(
    name: .customLong("samples"),
    help: "Founds timed across instances (with --instances 2 or more).")
  var samplesOption = 200
  @Option(
    name: .customLong("pgbench-scale"), help: "pgbench's scale factor (100 000 accounts each).")
  var pgbenchScaleOption = 10
  @Flag(
    name: .long,
    help: """
      A short run for the test command, so the benchmark cannot rot: 50 devices, 8 \
      connections, 1 s each, 20 founds across instances, pgbench scale 1 (replaces \
      --devices, --connections, --seconds, --samples and --pgbench-scale).
      """)
  var short = false
  @Flag(name: .long, help: "Print one JSON object.") var json = false

  var isPostgres: Bool {
    guard let database, case .postgres = StorageLocation(database) else { return false }
    return true
  }

  func validate() throws {
    guard (2...100_000).contains(devices) else {
      throw ValidationError("--devices must be between 2 and 100000")
    }
    guard (0...100).contains(sightings) else {
      throw ValidationError("--sightings must be between 0 and 100")
    }
    guard connections >= 1, threads >= 1, seconds >= 1 else {
      throw ValidationError("--connections, --threads and --seconds must be at least 1")
    }
    guard (1...8).contains(instances) else {
      throw ValidationError("--instances must be between 1 and 8")
    }
    guard instances == 1 || isPostgres else {
      throw ValidationError(
        "--instances \(instances) needs --database postgres://…: a SQLite file is served by "
          + "one process")
    }
    guard connections >= instances else {
      throw ValidationError("--connections must be at least --instances")
    }
    guard (1...100_000).contains(samples), (1...1000).contains(pgbenchScale) else {
      throw ValidationError("--samples must be 1–100000 and --pgbench-scale 1–1000")
    }
  }

  /// The sizes of this run: the options, or the short run's.
  var devices: Int { short ? 50 : devicesOption }
  var connections: Int { short ? 8 : connectionsOption }
  var seconds: Int { short ? 1 : secondsOption }
  var samples: Int { short ? 20 : samplesOption }
  var pgbenchScale: Int { short ? 1 : pgbenchScaleOption }

  func run() async throws {
    guard let wrk = Self.executable("wrk") else {
      throw CommandFailure("wrk is not installed: apt-get install wrk")
    }
    let pgbench = Self.executable("pgbench")
    if isPostgres, pgbench == nil {
      throw CommandFailure("pgbench is not installed: apt-get install postgresql-client")
    }
    var logger = Logger(label: "nearby.bench")
    logger.logLevel = .error
    let folder = FileManager.default.temporaryDirectory
      .appendingPathComponent("nearby-bench-\(UUID().uuidString)")
    try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
    defer { try? FileManager.default.removeItem(at: folder) }
    let location =
      database.map { StorageLocation($0) }
      ?? .sqlite(path: folder.appendingPathComponent("bench.sqlite").path)
    let storage = try await location.open(logger: logger)
    let key = try await storage.transaction { store in
      try store.apiKeys.createAPIKey(project: "bench", role: .admin, label: "bench", now: Date())
    }.key

    var result: [String: Any] = [
      "storage": isPostgres ? "postgres" : "sqlite", "devices": devices,
      "sightings_per_report": sightings, "connections": connections, "seconds": seconds,
      "instances": instances,
    ]
    var lines: [String] = []
    // What failed, said after the figures: a run with errors measured the errors.
    var broken: [String] = []
    let health: WrkRun
    let report: WrkRun
    if instances == 1 {
      let server = try await BenchServer.start(storage: storage, logger: logger)
      let base = "http://127.0.0.1:\(server.port)"
      progress("server on \(base) over \(location); registering \(devices) devices")
      (health, report) = try await measureOne(wrk, base: base, key: key, folder: folder)
      await server.stop()
    } else {
      await storage.shutdown()
      progress("starting \(instances) nearby-server processes on \(location)")
      let servers = try await ServerProcesses.start(
        count: instances, database: database ?? "", home: folder.path)
      do {
        progress("servers on \(servers.bases.joined(separator: ", ")); registering devices")
        (health, report) = try await measureOne(
          wrk, base: servers.bases[0], key: key, folder: folder)
        progress("wrk report on \(instances) instances at once for \(seconds) s")
        let all = try await measureAll(wrk, bases: servers.bases, folder: folder)
        for (index, run) in all.enumerated() where run.non2xx > 0 || run.requests == 0 {
          broken.append(run.line("POST report on instance \(index + 1)"))
        }
        let aggregate = all.map(\.requestsPerSecond).reduce(0, +)
        let worstP99 = all.map(\.p99Milliseconds).max() ?? .nan
        progress("timing \(samples) founds from instance 1 to a stream on instance 2")
        let crossing = try await CrossInstanceLatency.measure(
          reportingBase: servers.bases[0], streamBase: servers.bases[1], key: key,
          samples: samples, timeout: .seconds(5))
        if crossing.samples.isEmpty {
          broken.append("no found crossed from instance 1 to instance 2 within 5 s")
        }
        let scaling = report.requestsPerSecond > 0 ? aggregate / report.requestsPerSecond : 0
        result["report_all_instances"] = [
          "requests_per_second": aggregate, "worst_p99_ms": worstP99,
          "per_instance": all.map(\.dictionary),
        ]
        result["aggregate_over_one_instance"] = scaling
        result["found_across_instances"] = crossing.dictionary
        lines += [
          String(
            format:
              "POST report on %d instances at once: %.0f requests/s in all, worst p99 %.2f ms",
            instances, aggregate, worstP99),
          String(
            format: "%d instances / one instance throughput: %.2f× (goal ≥ 1×)", instances,
            scaling),
          crossing.line() + " (goal p99 ≤ 100 ms)",
        ]
      } catch {
        await servers.stop()
        throw error
      }
      await servers.stop()
    }
    if instances == 1 { await storage.shutdown() }
    for (name, run) in [("GET /healthz", health), ("POST report", report)]
    where run.non2xx > 0 || run.requests == 0 {
      broken.append(run.line(name))
    }

    let ratio =
      health.requestsPerSecond > 0 ? report.requestsPerSecond / health.requestsPerSecond : 0
    result["healthz"] = health.dictionary
    result["report"] = report.dictionary
    result["ratio"] = ratio
    var header = [
      "storage \(isPostgres ? "postgres" : "sqlite"), \(devices) devices, \(sightings) sightings a report, "
        + "\(connections) connections, \(seconds) s each, \(instances) instance(s)",
      health.line("GET /healthz"),
      report.line("POST report" + (instances > 1 ? " (one instance)" : "")),
      String(
        format: "report / healthz throughput: %.1f %%%@", ratio * 100,
        isPostgres ? "" : " (goal ≥ 50 %)"),
      String(
        format: "report p99: %.2f ms (goal ≤ %d ms)", report.p99Milliseconds,
        isPostgres ? 50 : 20),
    ]
    if isPostgres, let pgbench, let url = database {
      progress("pgbench tpcb-like for \(seconds) s (scale \(pgbenchScale))")
      let reference = try await PgbenchRun.run(
        pgbench: pgbench, url: url, scale: pgbenchScale, clients: connections,
        threads: threads, seconds: seconds)
      let pgRatio =
        reference.transactionsPerSecond > 0
        ? report.requestsPerSecond / reference.transactionsPerSecond : 0
      result["pgbench"] = reference.dictionary
      result["report_over_pgbench"] = pgRatio
      header += [
        reference.line(),
        String(
          format: "report / pgbench tpcb-like throughput: %.1f %% (goal ≥ 50 %%)", pgRatio * 100),
      ]
    }
    if json {
      let data = try JSONSerialization.data(withJSONObject: result, options: [.sortedKeys])
      print(String(decoding: data, as: UTF8.self))
    } else {
      for line in header + lines { print(line) }
    }
    if !broken.isEmpty {
      throw CommandFailure("the benchmark's requests failed:\n" + broken.joined(separator: "\n"))
    }
  }

  /// Registers the fleet through `base`, then wrk on `/healthz` and on report there.
  private func measureOne(_ wrk: String, base: String, key: String, folder: URL) async throws
    -> (health: WrkRun, report: WrkRun)
  {
    let fleet = try await BenchFleet.make(
      base: base, key: key, devices: devices, progress: { progress($0) })
    try fleet.luaScript(key: key, sightings: sightings).write(
      to: Self.script(in: folder), atomically: true, encoding: .utf8)
    progress("wrk /healthz for \(seconds) s")
    let health = try await WrkRun.run(
      wrk, arguments: wrkArguments(base + "/healthz", script: nil))
    // Right before, so the sightings are fresh (lost-after is 10 s) when wrk starts.
    progress("warming up: every device reports once")
    try await fleet.warmUp(base: base, key: key, sightings: sightings)
    progress("wrk report for \(seconds) s")
    let report = try await WrkRun.run(
      wrk, arguments: wrkArguments(base + "/", script: Self.script(in: folder).path))
    return (health, report)
  }

  /// wrk on report against every base at once, the connections spread over them.
  private func measureAll(_ wrk: String, bases: [String], folder: URL) async throws -> [WrkRun] {
    let script = Self.script(in: folder).path
    let share = connections / bases.count
    let runs = bases.map { wrkArguments($0 + "/", script: script, connections: share) }
    return try await withThrowingTaskGroup(of: (Int, WrkRun).self) { group in
      for (index, arguments) in runs.enumerated() {
        group.addTask { (index, try await WrkRun.run(wrk, arguments: arguments)) }
      }
      var results: [(Int, WrkRun)] = []
      for try await result in group { results.append(result) }
      return results.sorted { $0.0 < $1.0 }.map(\.1)
    }
  }

  private static func script(in folder: URL) -> URL {
    folder.appendingPathComponent("report.lua")
  }

  func wrkArguments(_ url: String, script: String?, connections: Int? = nil) -> [String] {
    let connections = connections ?? self.connections
    var arguments = [
      "-t\(min(threads, connections))", "-c\(connections)", "-d\(seconds)s", "--latency",
      "--timeout", "5s",
    ]
    if let script { arguments += ["-s", script] }
    return arguments + [url]
  }

  func progress(_ text: String) {
    guard !json else { return }
    StandardStreams.error("… \(text)\n")
  }

  static func executable(_ name: String) -> String? {
    let paths = (ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin").split(
      separator: ":")
    return paths.map { "\($0)/\(name)" }.first { FileManager.default.isExecutableFile(atPath: $0) }
  }
}
