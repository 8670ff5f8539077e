import Foundation
import TestSupport

/// A `nearby` child process: TestSupport's ``RunningProcess`` (stdout collected line by line,
/// stderr whole, each on a thread of its own), started with `nearby` as the default program.
typealias CLIProcess = RunningProcess

extension RunningProcess {
  /// Runs `nearby` (or `executable`) with `arguments`.
  convenience init(
    _ arguments: [String], environment: [String: String], executable: URL? = nil
  ) throws {
    try self.init(try executable ?? CLIEnvironment.nearby(), arguments, environment: environment)
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
  static func nearby() throws -> URL { try ChildProcess.built("nearby") }

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
    let port = freeLoopbackPort()
    environment["NEARBY_LOCAL_PORT"] = "\(port)"
    return (folder, environment, port)
  }

  /// Runs `nearby` (or `program`, found on the PATH) to its end (at most `timeout`), on a
  /// thread of its own.
  static func run(
    program: String? = nil, _ arguments: [String], environment: [String: String],
    timeout: Duration = .seconds(30)
  ) async throws -> (status: Int32, out: String, err: String) {
    let process =
      try program.map {
        try CLIProcess(
          [$0] + arguments, environment: environment,
          executable: URL(fileURLWithPath: "/usr/bin/env"))
      } ?? CLIProcess(arguments, environment: environment)
    guard let status = await process.exitStatus(timeout: timeout) else {
      process.kill()
      throw Failure(
        description: "\(program ?? "nearby") \(arguments) did not exit within \(timeout)")
    }
    // The reader threads may still be draining the last bytes.
    _ = await process.waitUntilDrained(timeout: .seconds(5))
    return (status, process.lines.joined(separator: "\n"), process.errors)
  }
}
