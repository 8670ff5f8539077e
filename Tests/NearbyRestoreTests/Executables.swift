import Foundation
import Testing

/// The built executables next to this test bundle, run on threads of their own.
enum Executables {
  static func find(_ name: String) throws -> URL {
    var directory = URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent()
    for _ in 0..<4 {
      let candidate = directory.appendingPathComponent(name)
      if FileManager.default.isExecutableFile(atPath: candidate.path) { return candidate }
      directory.deleteLastPathComponent()
    }
    throw Failure("\(name) is not built: run swift build --build-tests first")
  }

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
    try await withCheckedThrowingContinuation { continuation in
      Thread.detachNewThread {
        do {
          let process = Process()
          process.executableURL = executable
          process.arguments = arguments
          if let environment { process.environment = environment }
          let out = Pipe()
          let err = Pipe()
          process.standardOutput = out
          process.standardError = err
          process.standardInput = FileHandle.nullDevice
          try process.run()
          let killer = DispatchWorkItem {
            if process.isRunning { kill(process.processIdentifier, SIGKILL) }
          }
          DispatchQueue.global().asyncAfter(deadline: .now() + timeout, execute: killer)
          let errors = err.fileHandleForReading
          let output = out.fileHandleForReading.readDataToEndOfFile()
          let errorText = errors.readDataToEndOfFile()
          process.waitUntilExit()
          killer.cancel()
          continuation.resume(
            returning: Result(
              status: process.terminationStatus, out: String(decoding: output, as: UTF8.self),
              err: String(decoding: errorText, as: UTF8.self)))
        } catch {
          continuation.resume(throwing: error)
        }
      }
    }
  }
}
