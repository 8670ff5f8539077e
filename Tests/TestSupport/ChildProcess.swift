public import Foundation

/// Runs a program to its end for a test, on a thread of its own: waiting for a process must
/// never block Swift's cooperative threads (there are two of them on this machine).
public enum ChildProcess {
  public struct Result: Sendable {
    public var status: Int32
    public var out: Data
    /// Standard error; empty when `combineOutput` sent it to ``out``.
    public var err: Data

    public var outText: String { String(decoding: out, as: UTF8.self) }
    public var errText: String { String(decoding: err, as: UTF8.self) }
  }

  /// A built executable of this package, found next to the test bundle (SwiftPM puts both in
  /// the build folder), or in `$NEARBY_TEST_EXECUTABLES` when that is set (the test command
  /// points it at `.build/release` to run the same tests against the release binaries).
  /// - Throws: a message naming the build command when it is not there.
  public static func built(_ name: String) throws -> URL {
    if let folder = ProcessInfo.processInfo.environment["NEARBY_TEST_EXECUTABLES"],
      !folder.isEmpty
    {
      let candidate = URL(fileURLWithPath: folder).appendingPathComponent(name)
      guard FileManager.default.isExecutableFile(atPath: candidate.path) else {
        throw NotBuilt(
          description: "\(name) is not in NEARBY_TEST_EXECUTABLES=\(folder): build it there first")
      }
      return candidate
    }
    var directory = URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent()
    for _ in 0..<4 {
      let candidate = directory.appendingPathComponent(name)
      if FileManager.default.isExecutableFile(atPath: candidate.path) { return candidate }
      directory.deleteLastPathComponent()
    }
    throw NotBuilt(description: "\(name) is not built: run swift build --build-tests first")
  }

  /// Runs `executable` with `arguments` to its end (a ``RunningProcess``), standard input from
  /// /dev/null; killed with SIGKILL after `timeout` seconds.
  /// - Parameter combineOutput: standard error goes to the same pipe as standard output.
  /// - Throws: what `Process.run()` throws when the program cannot be started.
  public static func run(
    _ executable: URL, _ arguments: [String], environment: [String: String]? = nil,
    combineOutput: Bool = false, timeout: TimeInterval = 300
  ) async throws -> Result {
    let process = try RunningProcess(
      executable, arguments, environment: environment, combineOutput: combineOutput)
    var status = await process.exitStatus(timeout: .seconds(timeout))
    if status == nil {
      process.kill()
      status = await process.exitStatus()
    }
    // A grandchild that inherited a pipe may keep it open: the output is what came by then.
    _ = await process.waitUntilDrained(timeout: .seconds(5))
    return Result(
      status: status ?? SIGKILL, out: process.output, err: process.errorOutput)
  }

  struct NotBuilt: Error, CustomStringConvertible {
    var description: String
  }
}
