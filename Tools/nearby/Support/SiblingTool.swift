import Foundation
import Glibc

/// The tools installed beside `nearby`: the server (`nearby-server`) and the development tool
/// with the benchmarks and the simulated demo (`nearby-bench`). `nearby server …`,
/// `nearby bench …` and `nearby demo …` run them, so the user CLI links neither the server's
/// libraries nor the test kits.
enum SiblingTool: String {
  case server = "nearby-server"
  case bench = "nearby-bench"

  /// The tool's path: next to this executable (as `swift build` and an install put them), or
  /// else the first one on `PATH`.
  /// - Throws: ``ExitFailure`` 69 naming how to build it when it is in neither place.
  func path() throws -> String {
    var candidates: [String] = []
    if let executable = try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe")
    {
      candidates.append(
        URL(fileURLWithPath: executable).deletingLastPathComponent().appendingPathComponent(
          rawValue
        ).path)
    }
    let path = ProcessInfo.processInfo.environment["PATH"] ?? ""
    candidates += path.split(separator: ":").map { "\($0)/\(rawValue)" }
    guard let found = candidates.first(where: { access($0, X_OK) == 0 }) else {
      throw ExitFailure(
        "\(rawValue) is not installed next to nearby nor on PATH; build it with "
          + "`swift build --product \(rawValue)`", code: ExitCodes.unavailable)
    }
    return found
  }

  /// Replaces this process with the tool, given `arguments` after its name; returns only by
  /// throwing.
  /// - Throws: ``ExitFailure`` 69 when the tool is missing or cannot be run.
  func exec(_ arguments: [String]) throws -> Never {
    let tool = try path()
    let all = [rawValue] + arguments
    var argv: [UnsafeMutablePointer<CChar>?] = all.map { strdup($0) } + [nil]
    execv(tool, &argv)
    let reason = String(cString: strerror(errno))
    for pointer in argv { free(pointer) }
    throw ExitFailure("cannot run \(tool): \(reason)", code: ExitCodes.unavailable)
  }
}
