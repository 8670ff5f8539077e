import CommandLineSupport
import ArgumentParser
import Foundation
import Logging
import NearbyServer
import Resolution
import ServerStorage

/// `nearby bench server`: wrk against `report` (sightings from many simulated devices) and
/// against `/healthz` on the same in-process server, one after the other in one run.
struct ServerBench: AsyncParsableCommand {
  static let configuration = CommandConfiguration(
    commandName: "server",
    abstract: "Report throughput and latency under wrk, next to /healthz on the same server.",
    discussion: """
      Starts a resolver server in this process (SQLite in a temporary folder, or --database),
      registers --devices devices that each publish a message and subscribe, then runs wrk
      (Debian package 'wrk') for --seconds against GET /healthz and against
      POST /v1/devices/{id}/report, each report carrying --sightings sightings of other
      devices' tokens. Prints requests/s, p50/p99 latency and the report/healthz ratio.
      """)

  @Option(
    name: .long, help: "postgres://… to measure PostgreSQL (default: a temporary SQLite file).")
  var database: String?
  @Option(name: .long, help: "Simulated devices.") var devices = 1000
  @Option(name: .long, help: "Sightings per report.") var sightings = 3
  @Option(name: .long, help: "wrk connections.") var connections = 64
  @Option(name: .long, help: "wrk threads.") var threads = 2
  @Option(name: .long, help: "Seconds per measurement.") var seconds = 10
  @Flag(name: .long, help: "Print one JSON object.") var json = false

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
  }

  func run() async throws {
    guard let wrk = Self.executable("wrk") else {
      throw CommandFailure("wrk is not installed: apt-get install wrk")
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
      try store.createAPIKey(project: "bench", label: "bench", now: Date())
    }.key
    let server = try await BenchServer.start(storage: storage, logger: logger)
    let port = server.port
    let base = "http://127.0.0.1:\(port)"
    progress("server on \(base) over \(location); registering \(devices) devices")

    let fleet = try await BenchFleet.make(
      base: base, key: key, devices: devices, progress: { progress($0) })
    let script = folder.appendingPathComponent("report.lua")
    try fleet.luaScript(key: key, sightings: sightings).write(
      to: script, atomically: true, encoding: .utf8)

    progress("wrk /healthz for \(seconds) s")
    let health = try await WrkRun.run(
      wrk, arguments: wrkArguments(base + "/healthz", script: nil))
    progress("wrk report for \(seconds) s")
    let report = try await WrkRun.run(
      wrk, arguments: wrkArguments(base + "/", script: script.path))
    await server.stop()
    await storage.shutdown()

    let ratio =
      health.requestsPerSecond > 0 ? report.requestsPerSecond / health.requestsPerSecond : 0
    let storageName = location.description.hasPrefix("sqlite") ? "sqlite" : "postgres"
    if json {
      let object: [String: Any] = [
        "storage": storageName, "devices": devices, "sightings_per_report": sightings,
        "connections": connections, "seconds": seconds,
        "healthz": health.dictionary, "report": report.dictionary, "ratio": ratio,
      ]
      let data = try JSONSerialization.data(withJSONObject: object, options: [.sortedKeys])
      print(String(decoding: data, as: UTF8.self))
    } else {
      print(
        "storage \(storageName), \(devices) devices, \(sightings) sightings a report, "
          + "\(connections) connections, \(seconds) s each")
      print(health.line("GET /healthz"))
      print(report.line("POST report"))
      print(String(format: "report / healthz throughput: %.1f %% (goal ≥ 50 %%)", ratio * 100))
      print(String(format: "report p99: %.2f ms (goal ≤ 20 ms)", report.p99Milliseconds))
    }
  }

  func wrkArguments(_ url: String, script: String?) -> [String] {
    var arguments = [
      "-t\(threads)", "-c\(connections)", "-d\(seconds)s", "--latency", "--timeout", "5s",
    ]
    if let script { arguments += ["-s", script] }
    return arguments + [url]
  }

  func progress(_ text: String) {
    guard !json else { return }
    FileHandle.standardError.write(Data("… \(text)\n".utf8))
  }

  static func executable(_ name: String) -> String? {
    let paths = (ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin").split(
      separator: ":")
    return paths.map { "\($0)/\(name)" }.first { FileManager.default.isExecutableFile(atPath: $0) }
  }
}
