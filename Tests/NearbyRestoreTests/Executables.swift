import Foundation
import Testing
import TestSupport

/// The built executables next to this test bundle, run on threads of their own.
enum Executables {
  static func find(_ name: String) throws -> URL { try ChildProcess.built(name) }

  struct Failure: Error, CustomStringConvertible {
    var description: String
    init(_ description: String) { self.description = description }
  }

  struct Result: Sendable {
    var status: Int32
    var out: String
    var err: String
  }

  /// Runs `executable` with `arguments` to its end, at most `timeout` (then SIGKILL).
  static func run(
    _ executable: URL, _ arguments: [String], environment: [String: String]? = nil,
    timeout: TimeInterval = 30
  ) async throws -> Result {
    let result = try await ChildProcess.run(
      executable, arguments, environment: environment, timeout: timeout)
    return Result(status: result.status, out: result.outText, err: result.errText)
  }
}
