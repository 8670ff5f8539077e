import CommandLineSupport
import ArgumentParser
import BackgroundPersistence
import Core
import Foundation
import TestSupport
import PermissionStore
import Strategy

/// Time from starting nearby-restore to its READY=1 with N background subscriptions recorded.
struct RestoreBench: AsyncParsableCommand {
  static let configuration = CommandConfiguration(
    commandName: "restore",
    abstract: "nearby-restore: process start → READY=1 with N background subscriptions.",
    discussion: """
      Records N background subscriptions (and permission, background mode) in a fresh store, \
      then starts the nearby-restore next to this nearby --runs times with $NOTIFY_SOCKET set \
      to a socket of its own, and measures from just before the process is started to the \
      READY=1 datagram. Each run is then stopped with SIGTERM. Exits 1 when a launch sends no \
      READY=1 within 30 s, not when the goal is missed.
      """)

  @Option(help: "Background subscriptions recorded.")
  var subscriptions = 100

  @Option(help: "Launches measured.")
  var runs = 20

  @Flag(
    help: """
      A short run for the test command, so the benchmark cannot rot: 3 launches (replaces \
      --runs).
      """)
  var short = false

  @Flag(help: "Print the results as one JSON object.")
  var json = false

  struct Results: Encodable {
    var subscriptions: Int
    var runs: Int
    var p50Milliseconds: Double
    var p95Milliseconds: Double
    var maxMilliseconds: Double
  }

  func validate() throws {
    guard subscriptions >= 0, runs > 0 else {
      throw ValidationError("--subscriptions must be ≥ 0 and --runs > 0")
    }
  }

  func run() async throws {
    let runs = short ? 3 : self.runs
    let folder = URL(fileURLWithPath: "/tmp/nearby-bench-restore-\(UUID().uuidString.prefix(8))")
    try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
    defer { try? FileManager.default.removeItem(at: folder) }
    let store = try await DefaultsStore(appID: "bench", directory: folder)
    try await NearbyPermission(store: store, prompt: .never).setGranted(true)
    let background = BackgroundPersistence(store: store)
    try await background.setEnabled(true)
    let descriptors = (0..<subscriptions).map {
      BackgroundSubscription(namespace: "bench", type: "t\($0)", strategy: .bleOnly)
    }
    try await store.set(descriptors, forKey: BackgroundPersistence.subscriptionsKey)
    store.close()

    let executable = URL(fileURLWithPath: "/proc/self/exe").resolvingSymlinksInPath()
      .deletingLastPathComponent().appendingPathComponent("nearby-restore")
    guard FileManager.default.isExecutableFile(atPath: executable.path) else {
      throw CommandFailure("build nearby-restore beside nearby-bench first: \(executable.path)")
    }
    let socketPath = folder.appendingPathComponent("notify").path
    let arguments = ["--app", "bench", "--config-dir", folder.path, "--log-to", "stderr"]
    let times = try await Self.onThread {
      try Self.measure(executable, arguments, socketPath: socketPath, runs: runs)
    }
    let sorted = times.sorted()
    let results = Results(
      subscriptions: subscriptions, runs: runs, p50Milliseconds: sorted[sorted.count / 2],
      p95Milliseconds: sorted[min(sorted.count - 1, sorted.count * 95 / 100)],
      maxMilliseconds: sorted.last ?? 0)
    if json {
      print(JSONLine.encode(results))
    } else {
      print(
        "nearby-restore with \(subscriptions) background subscriptions, \(runs) launches: "
          + "start → READY=1 p50 \(String(format: "%.1f", results.p50Milliseconds)) ms, p95 "
          + "\(String(format: "%.1f", results.p95Milliseconds)) ms, max "
          + "\(String(format: "%.1f", results.maxMilliseconds)) ms")
    }
  }

  private static func onThread<T: Sendable>(
    _ body: @escaping @Sendable () throws -> T
  ) async throws -> T {
    try await withCheckedThrowingContinuation { continuation in
      Thread.detachNewThread { continuation.resume(with: Result { try body() }) }
    }
  }

  /// Launches `runs` times; milliseconds from launch to READY=1 each time. Blocks.
  private static func measure(
    _ executable: URL, _ arguments: [String], socketPath: String, runs: Int
  ) throws -> [Double] {
    let socket = try NotifySocket(path: socketPath)
    defer { socket.stop() }
    var environment = ProcessInfo.processInfo.environment
    environment["NOTIFY_SOCKET"] = socketPath
    var times: [Double] = []
    for _ in 0..<runs {
      let process = Process()
      process.executableURL = executable
      process.arguments = arguments
      process.environment = environment
      process.standardOutput = FileHandle.nullDevice
      process.standardError = FileHandle.nullDevice
      let start = ContinuousClock.now
      try process.run()
      guard let ready = socket.arrival(of: "READY=1", since: start, timeout: .seconds(30)) else {
        process.terminate()
        throw CommandFailure("nearby-restore sent no READY=1 within 30 s")
      }
      let elapsed = start.duration(to: ready)
      times.append(elapsed.seconds * 1000)
      process.terminate()
      process.waitUntilExit()
    }
    return times
  }
}
