import CommandLineSupport
import ArgumentParser
import Core
import Foundation
import Logging
import MediumTestKit
import NearbyServer
import ResolverClient
import ServerStorage
import Strategy
import Synchronization
import Tokens
import BeaconFrames

/// `nearby bench beacon-found`: from a beacon frame reaching the manager to the attachment's
/// found handler, with the resolver server on loopback; cache cold and cache warm.
struct BeaconFoundBench: AsyncParsableCommand {
  static let configuration = CommandConfiguration(
    commandName: "beacon-found",
    abstract: "Beacon seen → attachment found latency, resolver cache cold and warm.",
    discussion: """
      Starts a resolver server in this process (SQLite in a temporary folder), registers \
      --beacons Eddystone-UID beacons with one attachment each, and runs a manager with \
      `.server(URL)` and a medium that injects beacon frames. Cold: each beacon is heard for \
      the first time, so the manager asks the server (POST /v1/beaconinfo:getforobserved); \
      warm: a second subscription hears them again while the manager's cache holds the \
      answers. One beacon at a time; prints p50/p99/max per phase. Goals: cold \
      p99 ≤ 50 ms, warm p99 ≤ 1 ms. Exits 1 when a beacon is not found within 10 s, not when \
      a goal is missed.
      """)

  @Option(name: .long, help: "Beacons (each measured once per phase).") var beacons = 300
  @Flag(
    help: """
      A short run for the test command, so the benchmark cannot rot: 20 beacons (replaces \
      --beacons).
      """)
  var short = false
  @Flag(name: .long, help: "Print one JSON object.") var json = false

  func validate() throws {
    guard (1...10_000).contains(beacons) else {
      throw ValidationError("--beacons must be between 1 and 10000")
    }
  }

  func run() async throws {
    let beacons = short ? 20 : self.beacons
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
    let frames = (0..<beacons).map(Self.frame)
    let now = Date()
    let key = try await storage.transaction { store in
      let key = try store.apiKeys.createAPIKey(
        project: "bench", role: .admin, label: "bench", now: now
      ).key
      for (index, frame) in frames.enumerated() {
        let id = BeaconID(frame: frame)!
        _ = try store.beacons.registerBeacon(
          project: "bench", advertisedID: id, description: "",
          attachments: [NewAttachment(namespacedType: "bench/seat", data: Array("\(index)".utf8))],
          now: now)
      }
      return key
    }
    let server = try await BenchServer.start(storage: storage, logger: logger)
    let port = server.port
    progress("server on 127.0.0.1:\(port), \(beacons) beacons registered")

    let medium = ScriptedMedium(kind: .ble, name: "injected beacons", capabilities: [.beacons])
    let manager = try await MessageManager(
      apiKey: key,
      configuration: .init(
        resolver: .server(
          URL(string: "http://127.0.0.1:\(port)")!, credentialStore: InMemoryCredentialStore(),
          logger: logger),
        mediums: [.scripted(medium)], logger: logger))
    let cold = LatencyRecorder(size: beacons)
    let first = try await manager.subscribe(
      onFound: { cold.handled(Self.index($0)) }, configure: { $0.deviceTypes = .bleBeacons })
    progress("cold: \(beacons) beacons, each heard for the first time")
    try await measure(frames, medium: medium, recorder: cold)
    let warm = LatencyRecorder(size: beacons)
    let second = try await manager.subscribe(
      onFound: { warm.handled(Self.index($0)) }, configure: { $0.deviceTypes = .bleBeacons })
    progress("warm: the same beacons again, for a new subscription")
    try await measure(frames, medium: medium, recorder: warm)
    await first.cancel()
    await second.cancel()
    await manager.shutdown()
    await server.stop()
    await storage.shutdown()

    let phases = [Phase("cold", cold, goal: 50_000), Phase("warm", warm, goal: 1_000)]
    if json {
      let object = phases.map(\.dictionary)
      let data = try JSONSerialization.data(
        withJSONObject: ["beacons": beacons, "phases": object], options: [.sortedKeys])
      print(String(decoding: data, as: UTF8.self))
    } else {
      for phase in phases { print(phase.line) }
    }
  }

  /// Injects each beacon's frame once and waits for its found handler (10 s at most each).
  private func measure(_ frames: [BeaconFrame], medium: ScriptedMedium, recorder: LatencyRecorder)
    async throws
  {
    for (index, frame) in frames.enumerated() {
      recorder.injected(index)
      medium.hear(
        beacon: frame, address: String(format: "BE:AC:00:00:%02X:%02X", index >> 8, index & 0xff))
      let deadline = ContinuousClock.now + .seconds(10)
      while recorder.handledCount <= index {
        guard ContinuousClock.now < deadline else {
          throw CommandFailure("beacon \(index) was not found within 10 s")
        }
        // The latency is stamped by the handler; this only paces the loop.
        try await Task.sleep(for: .microseconds(200))
      }
    }
  }

  struct Phase {
    var name: String
    var latencies: [Double]
    var goal: Double

    init(_ name: String, _ recorder: LatencyRecorder, goal: Double) {
      self.name = name
      latencies = recorder.results().latencies
      self.goal = goal
    }

    func percentile(_ p: Double) -> Double {
      latencies.isEmpty ? 0 : latencies[min(latencies.count - 1, Int(Double(latencies.count) * p))]
    }

    var line: String {
      String(
        format: "%@: %d beacons, p50 %.3f ms, p99 %.3f ms, max %.3f ms (goal p99 ≤ %.0f ms)",
        name, latencies.count, percentile(0.5) / 1000, percentile(0.99) / 1000,
        (latencies.last ?? 0) / 1000, goal / 1000)
    }

    var dictionary: [String: Any] {
      [
        "phase": name, "beacons": latencies.count, "p50_ms": percentile(0.5) / 1000,
        "p99_ms": percentile(0.99) / 1000, "max_ms": (latencies.last ?? 0) / 1000,
        "goal_p99_ms": goal / 1000,
      ]
    }
  }

  static func frame(_ index: Int) -> BeaconFrame {
    let instance = (0..<6).map { UInt8(truncatingIfNeeded: index >> (8 * (5 - $0))) }
    return .eddystoneUID(
      try! EddystoneUID(
        namespace: BeaconBytes([0xbe, 0x0c, 0x4e, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x01]),
        instance: BeaconBytes(instance), txPower: -20))
  }

  static func index(_ message: Message) -> Int { Int(message.text ?? "") ?? 0 }

  private func progress(_ text: String) {
    guard !json else { return }
    StandardStreams.error("… \(text)\n")
  }
}
