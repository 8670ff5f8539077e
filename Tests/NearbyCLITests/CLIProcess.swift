import Foundation
import Synchronization

/// A `nearby` child process whose stdout and stderr are collected line by line while it runs
/// (each read on a thread of its own), so a test can wait for a line with a deadline.
final class CLIProcess: Sendable {
  let pid: Int32
  private let out = Mutex<[String]>([])
  private let err = Mutex("")
  private let status = Mutex<Int32?>(nil)

  /// Runs `nearby` (or `executable`) with `arguments`.
  init(_ arguments: [String], environment: [String: String], executable: URL? = nil) throws {
    let process = Process()
    process.executableURL = try executable ?? CLIEnvironment.nearby()
    process.arguments = arguments
    process.environment = environment
    process.standardInput = FileHandle.nullDevice
    let outPipe = Pipe()
    let errPipe = Pipe()
    process.standardOutput = outPipe
    process.standardError = errPipe
    try process.run()
    pid = process.processIdentifier
    let outHandle = outPipe.fileHandleForReading
    let errHandle = errPipe.fileHandleForReading
    Thread.detachNewThread { [self] in
      var pending = Data()
      while true {
        let chunk = outHandle.availableData
        if chunk.isEmpty { break }
        pending.append(chunk)
        while let newline = pending.firstIndex(of: UInt8(ascii: "\n")) {
          let line = String(decoding: pending[pending.startIndex..<newline], as: UTF8.self)
          pending.removeSubrange(pending.startIndex...newline)
          out.withLock { $0.append(line) }
        }
      }
    }
    Thread.detachNewThread { [self] in
      while true {
        let chunk = errHandle.availableData
        if chunk.isEmpty { break }
        err.withLock { $0 += String(decoding: chunk, as: UTF8.self) }
      }
    }
    Thread.detachNewThread { [self] in
      process.waitUntilExit()
      status.withLock { $0 = process.terminationStatus }
    }
  }

  var lines: [String] { out.withLock { $0 } }
  var errors: String { err.withLock { $0 } }

  /// The stdout lines parsed as JSON objects.
  var events: [[String: Any]] {
    lines.compactMap {
      (try? JSONSerialization.jsonObject(with: Data($0.utf8))) as? [String: Any]
    }
  }

  /// Waits at most `timeout` for a JSON line that satisfies `predicate`.
  func waitForEvent(
    timeout: Duration, _ predicate: ([String: Any]) -> Bool
  ) async -> [String: Any]? {
    let deadline = ContinuousClock.now + timeout
    while ContinuousClock.now < deadline {
      if let event = events.first(where: predicate) { return event }
      if status.withLock({ $0 }) != nil { return events.first(where: predicate) }
      try? await Task.sleep(for: .milliseconds(20))
    }
    return nil
  }

  func signal(_ number: Int32) { _ = Foundation.kill(pid, number) }

  /// The exit status, or `nil` if it still runs after `timeout`.
  func exitStatus(timeout: Duration) async -> Int32? {
    let deadline = ContinuousClock.now + timeout
    while ContinuousClock.now < deadline {
      if let status = status.withLock({ $0 }) { return status }
      try? await Task.sleep(for: .milliseconds(20))
    }
    return status.withLock { $0 }
  }

  func kill() {
    if status.withLock({ $0 }) == nil { _ = Foundation.kill(pid, SIGKILL) }
  }
}

/// The built `nearby` next to the test bundle, and a private environment for it: XDG folders
/// in a fresh temporary folder, and a local resolver port of its own.
enum CLIEnvironment {
  struct Failure: Error, CustomStringConvertible {
    var description: String
  }

  /// The `nearby` under test: next to the test bundle, or in `$NEARBY_TEST_EXECUTABLES` when
  /// that is set (the test command runs these tests again against `.build/release`).
  static func nearby() throws -> URL {
    if let folder = ProcessInfo.processInfo.environment["NEARBY_TEST_EXECUTABLES"],
      !folder.isEmpty
    {
      let candidate = URL(fileURLWithPath: folder).appendingPathComponent("nearby")
      guard FileManager.default.isExecutableFile(atPath: candidate.path) else {
        throw Failure(description: "nearby is not in NEARBY_TEST_EXECUTABLES=\(folder)")
      }
      return candidate
    }
    var directory = URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent()
    for _ in 0..<4 {
      let candidate = directory.appendingPathComponent("nearby")
      var isDirectory: ObjCBool = false
      if FileManager.default.fileExists(atPath: candidate.path, isDirectory: &isDirectory),
        !isDirectory.boolValue, FileManager.default.isExecutableFile(atPath: candidate.path)
      {
        return candidate
      }
      directory.deleteLastPathComponent()
    }
    throw Failure(description: "nearby is not built: run swift build --build-tests first")
  }

  /// A fresh home for one test: its folder, the environment and the local resolver port.
  static func make() throws -> (folder: URL, environment: [String: String], port: Int) {
    let folder = FileManager.default.temporaryDirectory.appendingPathComponent(
      "nearby-cli-\(UUID().uuidString)")
    try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
    var environment = ProcessInfo.processInfo.environment
    for key in ["NEARBY_API_KEY", "NEARBY_LAN_INTERFACE"] { environment[key] = nil }
    environment["HOME"] = folder.path
    // No PulseAudio for the CLI under test: the audio medium is reported unavailable.
    environment["PULSE_SERVER"] = nil
    environment["XDG_RUNTIME_DIR"] = folder.appendingPathComponent("runtime").path
    environment["XDG_CONFIG_HOME"] = folder.appendingPathComponent("config").path
    environment["XDG_DATA_HOME"] = folder.appendingPathComponent("data").path
    environment["XDG_STATE_HOME"] = folder.appendingPathComponent("state").path
    let port = Int.random(in: 20_000...40_000)
    environment["NEARBY_LOCAL_PORT"] = "\(port)"
    return (folder, environment, port)
  }

  /// Runs `nearby` to its end (at most `timeout`), on a thread of its own.
  static func run(
    _ arguments: [String], environment: [String: String], timeout: Duration = .seconds(30)
  ) async throws -> (status: Int32, out: String, err: String) {
    let process = try CLIProcess(arguments, environment: environment)
    guard let status = await process.exitStatus(timeout: timeout) else {
      process.kill()
      throw Failure(description: "nearby \(arguments) did not exit within \(timeout)")
    }
    // The reader threads may still be draining the last bytes.
    try await Task.sleep(for: .milliseconds(50))
    return (status, process.lines.joined(separator: "\n"), process.errors)
  }
}
