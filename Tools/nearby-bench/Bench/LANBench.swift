import CommandLineSupport
import ArgumentParser
import Foundation
import Synchronization

/// LAN across network namespaces: publish → found on another host, and lost after the
/// publisher is killed with SIGKILL.
struct LANBench: AsyncParsableCommand {
  static let configuration = CommandConfiguration(
    commandName: "lan",
    abstract: "LAN medium across network namespaces: publish → found, and SIGKILL → lost.",
    discussion: """
      Needs the namespaces of Tools/scripts/netns.sh (root):
        sudo Tools/scripts/netns.sh up nbbench
        sudo .build/release/nearby-bench lan --netns nbbench
        sudo Tools/scripts/netns.sh down nbbench
      Runs the `nearby` built beside nearby-bench: `nearby server` in PREFIX-srv, one \
      `nearby subscribe` in PREFIX-b and, --runs \
      times, a `nearby publish` in PREFIX-a (all over the LAN medium on lan0). Found latency: \
      from the publisher's "connected" note (its manager registered, just before it calls \
      publish) to the subscriber's found, both stamped by the processes on the one system \
      clock. Lost latency: from SIGKILL of the \
      publisher to the subscriber's lost. Exits 1 when a run is not found or not lost, not \
      when a goal is missed.
      """)

  @Option(help: "The namespace prefix given to Tools/scripts/netns.sh up.") var netns: String
  @Option(help: "Publishers started and killed.") var runs = 10
  @Option(help: "The server's lost-after, seconds.") var lostAfter = 3.0
  @Flag(
    help: """
      A short run for the test command, so the benchmark cannot rot: one publisher (replaces \
      --runs).
      """)
  var short = false
  @Flag(help: "Print the results as one JSON object.") var json = false

  struct Results: Encodable {
    var runs: Int
    var lostAfterSeconds: Double
    var foundP50Milliseconds: Double
    var foundP95Milliseconds: Double
    var foundMaxMilliseconds: Double
    var lostP50Milliseconds: Double
    var lostMaxMilliseconds: Double
  }

  func validate() throws {
    guard runs > 0, lostAfter > 0 else {
      throw ValidationError("--runs and --lost-after must be > 0")
    }
  }

  func run() async throws {
    let runs = short ? 1 : self.runs
    // The user CLI beside this tool (as `swift build` and an install put them).
    let nearby = URL(fileURLWithPath: "/proc/self/exe").resolvingSymlinksInPath()
      .deletingLastPathComponent().appendingPathComponent("nearby").path
    guard FileManager.default.isExecutableFile(atPath: nearby) else {
      throw CommandFailure("build nearby beside nearby-bench first: \(nearby)")
    }
    let folder = URL(fileURLWithPath: "/tmp/nearby-bench-lan-\(UUID().uuidString.prefix(8))")
    defer { try? FileManager.default.removeItem(at: folder) }
    var environment = ProcessInfo.processInfo.environment
    for (name, sub) in [
      ("XDG_CONFIG_HOME", "config"), ("XDG_DATA_HOME", "data"), ("XDG_STATE_HOME", "state"),
    ] {
      environment[name] = folder.appendingPathComponent(sub).path
    }
    func inNamespace(_ host: String, _ arguments: [String]) throws -> LineProcess {
      try LineProcess(
        "/usr/sbin/ip", ["netns", "exec", "\(netns)-\(host)", nearby] + arguments,
        environment: environment)
    }
    let server = try inNamespace(
      "srv", ["server", "--host", "0.0.0.0", "--port", "7171", "--lost-after", "\(lostAfter)"])
    defer { server.stop(SIGTERM) }
    let keyFile = folder.appendingPathComponent("config/nearby/server-api-key").path
    guard
      try await until(
        .seconds(30),
        {
          server.errors.contains("listening") && FileManager.default.fileExists(atPath: keyFile)
        })
    else {
      throw CommandFailure(
        "the server did not start in \(netns)-srv (made by Tools/scripts/netns.sh up \(netns)?): "
          + server.errors)
    }
    let key = try String(contentsOfFile: keyFile, encoding: .utf8)
      .trimmingCharacters(in: .whitespacesAndNewlines)
    let lanPort = String(Int.random(in: 40_000...60_000))
    func client(_ host: String, _ arguments: [String]) throws -> LineProcess {
      let address = host == "a" ? "10.70.1.1" : "10.70.2.1"
      return try inNamespace(
        host,
        arguments + [
          // The server is another host on a private link: plain HTTP is what it serves.
          "--server", "http://\(address):7171", "--allow-insecure-http", "--api-key", key,
          "--mediums", "lan",
          "--lan-interface", "lan0", "--lan-port", lanPort, "--json",
        ])
    }
    let subscriber = try client("b", ["subscribe"])
    defer { subscriber.stop(SIGINT) }
    guard
      try await until(.seconds(30), { subscriber.event("note", containing: "connected") != nil })
    else { throw CommandFailure("the subscriber did not connect: \(subscriber.errors)") }

    var found: [Double] = []
    var lost: [Double] = []
    for run in 0..<runs {
      let text = "bench-\(run)"
      let publisher = try client("a", ["publish", text])
      guard
        try await until(.seconds(30), { subscriber.event("found", text: text) != nil }),
        let start = publisher.event("note", containing: "connected")?.time,
        let end = subscriber.event("found", text: text)?.time
      else {
        publisher.stop(SIGKILL)
        throw CommandFailure("run \(run): not found; \(subscriber.errors) \(publisher.errors)")
      }
      found.append(end.timeIntervalSince(start) * 1000)
      let killed = Date()
      publisher.stop(SIGKILL)
      guard
        try await until(.seconds(lostAfter + 30), { subscriber.event("lost", text: text) != nil }),
        let gone = subscriber.event("lost", text: text)?.time
      else { throw CommandFailure("run \(run): not lost after SIGKILL") }
      lost.append(gone.timeIntervalSince(killed) * 1000)
      if !json {
        print(
          "run \(run + 1)/\(runs): found \(String(format: "%.0f", found.last!)) ms, "
            + "lost \(String(format: "%.0f", lost.last!)) ms after SIGKILL")
      }
    }
    found.sort()
    lost.sort()
    func percentile(_ values: [Double], _ p: Double) -> Double {
      values[min(values.count - 1, Int((Double(values.count - 1) * p).rounded()))]
    }
    let results = Results(
      runs: runs, lostAfterSeconds: lostAfter, foundP50Milliseconds: percentile(found, 0.5),
      foundP95Milliseconds: percentile(found, 0.95), foundMaxMilliseconds: found.last ?? 0,
      lostP50Milliseconds: percentile(lost, 0.5), lostMaxMilliseconds: lost.last ?? 0)
    if json {
      print(JSONLine.encode(results))
    } else {
      print(
        String(
          format: "publish → found: p50 %.0f ms, p95 %.0f ms, max %.0f ms (goal p50 ≤ 300 ms)",
          results.foundP50Milliseconds, results.foundP95Milliseconds, results.foundMaxMilliseconds))
      print(
        String(
          format:
            "SIGKILL → lost: p50 %.0f ms, max %.0f ms (lostAfter %.1f s; goal ≤ lostAfter + 1 s)",
          results.lostP50Milliseconds, results.lostMaxMilliseconds, lostAfter))
    }
  }

  private func until(_ timeout: Duration, _ condition: () -> Bool) async throws -> Bool {
    let deadline = ContinuousClock.now + timeout
    while ContinuousClock.now < deadline {
      if condition() { return true }
      try await Task.sleep(for: .milliseconds(5))
    }
    return condition()
  }
}

/// A child process whose stdout JSON lines and stderr are collected on threads of their own.
final class LineProcess: Sendable {
  struct Event: Sendable {
    var event: String
    var text: String?
    var detail: String?
    var time: Date?
  }

  private let pid: Int32
  private let exited = Mutex(false)
  private let lines = Mutex<[Event]>([])
  private let stderrText = Mutex("")

  init(_ executable: String, _ arguments: [String], environment: [String: String]) throws {
    let process = Process()
    process.executableURL = URL(fileURLWithPath: executable)
    process.arguments = arguments
    process.environment = environment
    process.standardInput = FileHandle.nullDevice
    let out = Pipe()
    let err = Pipe()
    process.standardOutput = out
    process.standardError = err
    try process.run()
    pid = process.processIdentifier
    Thread.detachNewThread { [self] in
      process.waitUntilExit()
      exited.withLock { $0 = true }
    }
    Thread.detachNewThread { [self] in
      var pending = Data()
      let handle = out.fileHandleForReading
      let parser = ISO8601DateFormatter()
      parser.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
      while true {
        let chunk = handle.availableData
        if chunk.isEmpty { break }
        pending.append(chunk)
        while let newline = pending.firstIndex(of: UInt8(ascii: "\n")) {
          let line = pending[pending.startIndex..<newline]
          pending.removeSubrange(pending.startIndex...newline)
          guard let object = try? JSONSerialization.jsonObject(with: line) as? [String: Any],
            let event = object["event"] as? String
          else { continue }
          let parsed = Event(
            event: event, text: object["text"] as? String, detail: object["detail"] as? String,
            time: (object["time"] as? String).flatMap { parser.date(from: $0) })
          lines.withLock { $0.append(parsed) }
        }
      }
    }
    Thread.detachNewThread { [self] in
      let handle = err.fileHandleForReading
      while true {
        let chunk = handle.availableData
        if chunk.isEmpty { break }
        stderrText.withLock { $0 += String(decoding: chunk, as: UTF8.self) }
      }
    }
  }

  var errors: String { stderrText.withLock { $0 } }

  func event(_ name: String, text: String) -> Event? {
    lines.withLock { $0.first { $0.event == name && $0.text == text } }
  }

  func event(_ name: String, containing fragment: String) -> Event? {
    lines.withLock { $0.first { $0.event == name && ($0.detail?.contains(fragment) ?? false) } }
  }

  /// Sends `signal` to the child (`ip netns exec` execs nearby, so it is nearby itself).
  func stop(_ signal: Int32) {
    if !exited.withLock({ $0 }) { kill(pid, signal) }
  }
}
