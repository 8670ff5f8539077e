import CommandLineSupport
import ArgumentParser
import Foundation
import Glibc
import PermissionStore

/// Durable writes per second of a `DefaultsStore`, on the disk that holds `--directory`.
struct StoreBench: AsyncParsableCommand {
  static let configuration = CommandConfiguration(
    commandName: "store",
    abstract: "DefaultsStore durable writes/s and write latency (one writer, then concurrent).",
    discussion: """
      Each write returns only once it is on disk (temporary file, fsync, rename, fsync of the \
      folder). "disk floor": that sequence alone, without the store (no lock, JSON or threads): \
      the most one writer can get from this disk. "sequential": one task awaits each write before the next (the latency of one \
      durable write). "concurrent": --writers tasks write at once; writes queued during an \
      fsync are committed together. "update": read-modify-write increments (the cross-process \
      counter path). The store file holds --keys keys, so each write rewrites that much JSON. \
      At the end the file is read again: every phase's last value must be there (else exit \
      1); the goal is never a reason to fail.
      """)

  @Option(help: "Writes in each phase.")
  var writes = 2_000

  @Option(help: "Concurrent writer tasks in the concurrent phase.")
  var writers = 16

  @Option(help: "Keys in the store file besides the one written.")
  var keys = 20

  @Option(
    help: "Folder for the store file (default: a new folder under the system's temporary folder).")
  var directory: String?

  @Flag(
    help: """
      A short run for the test command, so the benchmark cannot rot: 100 writes in each \
      phase, 4 concurrent writers (replaces --writes and --writers).
      """)
  var short = false

  @Flag(help: "Print the results as one JSON object.")
  var json = false

  struct Phase: Encodable {
    var name: String
    var writes: Int
    var seconds: Double
    var writesPerSecond: Double
    var p50Microseconds: Double
    var p99Microseconds: Double
  }

  func validate() throws {
    guard writes > 0, writers > 0, keys >= 0 else {
      throw ValidationError("--writes and --writers must be > 0, --keys ≥ 0")
    }
  }

  func run() async throws {
    let writes = short ? 100 : self.writes
    let writers = short ? 4 : self.writers
    let folder = URL(
      fileURLWithPath: directory
        ?? (NSTemporaryDirectory() + "/nearby-bench-store-\(UUID().uuidString)"))
    defer { if directory == nil { try? FileManager.default.removeItem(at: folder) } }
    let store = try await DefaultsStore(appID: "bench", directory: folder)
    for index in 0..<keys { try await store.set("value \(index)", forKey: "key\(index)") }

    var phases: [Phase] = []
    let text = try String(contentsOf: store.fileURL, encoding: .utf8)
    var latencies = try await Self.bareDisk(folder: folder, text: text, writes: writes)
    phases.append(phase("disk floor", writes, latencies.reduce(.zero, +), latencies))

    latencies = []
    var start = ContinuousClock.now
    for index in 0..<writes {
      let began = ContinuousClock.now
      try await store.set(index, forKey: "counter")
      latencies.append(began.duration(to: .now))
    }
    phases.append(phase("sequential", writes, start.duration(to: .now), latencies))

    let perWriter = (writes + writers - 1) / writers
    start = .now
    latencies = try await withThrowingTaskGroup(of: [Duration].self) { group in
      for writer in 0..<writers {
        group.addTask {
          var mine: [Duration] = []
          for index in 0..<perWriter {
            let began = ContinuousClock.now
            try await store.set(index, forKey: "writer\(writer)")
            mine.append(began.duration(to: .now))
          }
          return mine
        }
      }
      return try await group.reduce(into: []) { $0 += $1 }
    }
    phases.append(phase("concurrent", latencies.count, start.duration(to: .now), latencies))

    latencies = []
    start = .now
    for _ in 0..<writes {
      let began = ContinuousClock.now
      try await store.update("counter", as: Int.self) { ($0 ?? 0) + 1 }
      latencies.append(began.duration(to: .now))
    }
    phases.append(phase("update", writes, start.duration(to: .now), latencies))

    // What the file holds now: the sequential phase's last value plus the increments, and
    // each concurrent writer's last value.
    try await store.reload()
    let counter = store.integer(forKey: "counter")
    guard counter == 2 * writes - 1 else {
      throw CommandFailure(
        "the store file holds counter \(counter.map(String.init) ?? "nothing"), not "
          + "\(2 * writes - 1) after \(writes) writes and \(writes) increments")
    }
    for writer in 0..<writers where store.integer(forKey: "writer\(writer)") != perWriter - 1 {
      throw CommandFailure("the store file lost concurrent writer \(writer)'s last write")
    }
    store.close()

    if json {
      print(JSONLine.encode(phases))
    } else {
      print("store file: \(keys + 1) keys, folder \(folder.path)")
      for phase in phases {
        print(
          "\(phase.name): \(phase.writes) durable writes in \(String(format: "%.2f", phase.seconds)) s"
            + " = \(Int(phase.writesPerSecond)) writes/s; latency p50"
            + " \(Int(phase.p50Microseconds)) µs, p99 \(Int(phase.p99Microseconds)) µs")
      }
    }
  }

  /// The same durable replace without the store (no lock, no JSON, no threads): write a
  /// temporary file, fsync, rename, fsync the folder. What this disk allows one writer.
  private static func bareDisk(folder: URL, text: String, writes: Int) async throws -> [Duration] {
    try await withCheckedThrowingContinuation { continuation in
      Thread.detachNewThread {
        let temporary = folder.appendingPathComponent("floor.tmp").path
        let target = folder.appendingPathComponent("floor.json").path
        let directory = open(folder.path, O_RDONLY | O_DIRECTORY)
        defer { close(directory) }
        var bytes = Array(text.utf8)
        var latencies: [Duration] = []
        for _ in 0..<writes {
          let began = ContinuousClock.now
          let fd = open(temporary, O_WRONLY | O_CREAT | O_TRUNC, 0o600)
          guard fd >= 0, write(fd, &bytes, bytes.count) == bytes.count, fsync(fd) == 0,
            close(fd) == 0, rename(temporary, target) == 0, fsync(directory) == 0
          else {
            continuation.resume(
              throwing: CommandFailure("the disk floor loop failed: errno \(errno)"))
            return
          }
          latencies.append(began.duration(to: .now))
        }
        continuation.resume(returning: latencies)
      }
    }
  }

  private func phase(
    _ name: String, _ count: Int, _ elapsed: Duration, _ latencies: [Duration]
  ) -> Phase {
    let sorted = latencies.sorted()
    func micros(_ quantile: Double) -> Double {
      let value = sorted[min(sorted.count - 1, Int(Double(sorted.count) * quantile))]
      return value.seconds * 1e6
    }
    let seconds = elapsed.seconds
    return Phase(
      name: name, writes: count, seconds: seconds, writesPerSecond: Double(count) / seconds,
      p50Microseconds: micros(0.5), p99Microseconds: micros(0.99))
  }
}
