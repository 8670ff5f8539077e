import Foundation
import Testing

/// Runs the `nearby-store-probe` helper (a second process writing to a store) from the build
/// folder, on threads of its own: waiting for a process never blocks the cooperative pool.
enum Probe {
  static var executable: URL? {
    var directory = URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent()
    for _ in 0..<4 {
      let candidate = directory.appendingPathComponent("nearby-store-probe")
      if FileManager.default.isExecutableFile(atPath: candidate.path) { return candidate }
      directory.deleteLastPathComponent()
    }
    return nil
  }

  static func requireExecutable() throws -> URL {
    try #require(executable, "build the helper first: swift build --build-tests")
  }

  /// Runs the probe with `arguments` to its end; returns its exit status and stderr.
  static func run(_ arguments: [String]) async throws -> (status: Int32, err: String) {
    let executable = try requireExecutable()
    return try await onThread {
      let process = Process()
      process.executableURL = executable
      process.arguments = arguments
      let err = Pipe()
      process.standardError = err
      process.standardOutput = FileHandle.nullDevice
      try process.run()
      let text = err.fileHandleForReading.readDataToEndOfFile()
      process.waitUntilExit()
      return (process.terminationStatus, String(decoding: text, as: UTF8.self))
    }
  }

  /// Starts `write-loop`, waits for its first acknowledged write, lets it run `delay` more,
  /// kills it with SIGKILL, and returns the last value it acknowledged (printed after the
  /// write returned) and how it ended.
  static func killWhileWriting(
    _ arguments: [String], after delay: Duration
  ) async throws -> (lastAcknowledged: Int?, signal: Int32) {
    let executable = try requireExecutable()
    return try await onThread {
      let process = Process()
      process.executableURL = executable
      process.arguments = arguments
      let out = Pipe()
      process.standardOutput = out
      process.standardError = FileHandle.nullDevice
      try process.run()
      let reader = out.fileHandleForReading
      var output = Data()
      while !output.contains(0x0A) {
        let chunk = reader.availableData
        if chunk.isEmpty { break }
        output.append(chunk)
      }
      let micros = delay.components.attoseconds / 1_000_000_000_000
      usleep(UInt32(delay.components.seconds * 1_000_000 + micros))
      kill(process.processIdentifier, SIGKILL)
      output.append(reader.readDataToEndOfFile())
      process.waitUntilExit()
      // Only complete lines were acknowledged.
      let text = String(decoding: output, as: UTF8.self)
      let lines = text.split(separator: "\n", omittingEmptySubsequences: false).dropLast()
      return (lines.last.flatMap { Int($0) }, process.terminationStatus)
    }
  }

  private static func onThread<T: Sendable>(
    _ body: @escaping @Sendable () throws -> T
  ) async throws -> T {
    try await withCheckedThrowingContinuation { continuation in
      Thread.detachNewThread { continuation.resume(with: Result { try body() }) }
    }
  }
}

/// A fresh folder under the system's temporary folder, removed by `remove()`.
struct TemporaryFolder {
  let url: URL
  init() throws {
    url = FileManager.default.temporaryDirectory
      .appendingPathComponent("nearby-store-\(UUID().uuidString)")
    try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
  }
  func remove() { try? FileManager.default.removeItem(at: url) }
}
