import Foundation
import Synchronization

/// A child process left running while the test talks to it; its exit is awaited on a thread
/// of its own, and its stderr collected.
final class RunningProcess: Sendable {
  private let pid: Int32
  private let status = Mutex<Int32?>(nil)
  private let stderrText = Mutex("")

  init(_ executable: URL, _ arguments: [String], environment: [String: String]) throws {
    let process = Process()
    process.executableURL = executable
    process.arguments = arguments
    process.environment = environment
    process.standardInput = FileHandle.nullDevice
    process.standardOutput = FileHandle.nullDevice
    let err = Pipe()
    process.standardError = err
    try process.run()
    self.pid = process.processIdentifier
    Thread.detachNewThread { [self] in
      let text = err.fileHandleForReading.readDataToEndOfFile()
      stderrText.withLock { $0 = String(decoding: text, as: UTF8.self) }
      process.waitUntilExit()
      status.withLock { $0 = process.terminationStatus }
    }
  }

  var errors: String { stderrText.withLock { $0 } }

  func signal(_ signal: Int32) { Foundation.kill(pid, signal) }

  /// The exit status, or `nil` if it is still running after `timeout`.
  func exitStatus(timeout: Duration) async -> Int32? {
    let deadline = ContinuousClock.now + timeout
    while ContinuousClock.now < deadline {
      if let status = status.withLock({ $0 }) { return status }
      try? await Task.sleep(for: .milliseconds(20))
    }
    return status.withLock { $0 }
  }

  func kill() {
    if status.withLock({ $0 }) == nil { Foundation.kill(pid, SIGKILL) }
  }
}
