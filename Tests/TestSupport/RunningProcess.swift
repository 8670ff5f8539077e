public import Foundation
import Synchronization
public import NearbyTesting

/// A child process a test starts and talks to while it runs: the one process runner of the
/// tests (``ChildProcess/run(_:_:environment:combineOutput:timeout:)`` runs one to its end with
/// it). Standard input is /dev/null; standard output is kept whole and line by line, standard
/// error whole, each read on a thread of its own; the exit arrives through `Process`'s
/// termination handler: waiting for a process never blocks Swift's cooperative threads (there
/// are two on this machine). The child starts with no signal blocked, whatever the calling
/// thread blocks (a Dispatch worker blocks nearly all, and a child inherits the mask: pgbench's
/// `-T` alarm, or a server's SIGTERM, would never arrive).
public final class RunningProcess: Sendable {
  /// The child's process id.
  public let pid: Int32
  private struct Output {
    var bytes = Data()
    var lines: [String] = []
    var pending = Data()
  }
  private let out = Mutex(Output())
  private let err = Mutex(Data())
  private let status = ExitStatus()
  /// How many of the reader threads reached the end of their pipe.
  private let drained = Mutex(0)
  private let readers: Int
  /// Wakes the waits at each change of the output, the pipes or the exit status.
  private let changes = ChangeSignal()

  /// Starts `executable` with `arguments`.
  /// - Parameters:
  ///   - environment: the child's environment (`nil`: this process's).
  ///   - combineOutput: standard error goes to the same pipe as standard output.
  /// - Throws: what `Process.run()` throws when the program cannot be started.
  public init(
    _ executable: URL, _ arguments: [String], environment: [String: String]? = nil,
    combineOutput: Bool = false
  ) throws {
    let process = Process()
    process.executableURL = executable
    process.arguments = arguments
    if let environment { process.environment = environment }
    process.standardInput = FileHandle.nullDevice
    let outPipe = Pipe()
    let errPipe = combineOutput ? outPipe : Pipe()
    process.standardOutput = outPipe
    process.standardError = errPipe
    process.terminationHandler = { [status, changes] ended in
      status.value.withLock { $0 = ended.terminationStatus }
      changes.changed()
    }
    try Self.runUnblocked(process)
    pid = process.processIdentifier
    readers = combineOutput ? 1 : 2
    let outHandle = outPipe.fileHandleForReading
    Thread.detachNewThread { [self] in
      while true {
        let chunk = outHandle.availableData
        if chunk.isEmpty { break }
        out.withLock { output in
          output.bytes.append(chunk)
          output.pending.append(chunk)
          while let newline = output.pending.firstIndex(of: UInt8(ascii: "\n")) {
            let start = output.pending.startIndex
            output.lines.append(String(decoding: output.pending[start..<newline], as: UTF8.self))
            output.pending.removeSubrange(start...newline)
          }
        }
        changes.changed()
      }
      out.withLock { output in
        if !output.pending.isEmpty {
          output.lines.append(String(decoding: output.pending, as: UTF8.self))
          output.pending = Data()
        }
      }
      drained.withLock { $0 += 1 }
      changes.changed()
    }
    if !combineOutput {
      let errHandle = errPipe.fileHandleForReading
      Thread.detachNewThread { [self] in
        while true {
          let chunk = errHandle.availableData
          if chunk.isEmpty { break }
          err.withLock { $0.append(chunk) }
          changes.changed()
        }
        drained.withLock { $0 += 1 }
        changes.changed()
      }
    }
  }

  /// The exit status, set once by the termination handler.
  private final class ExitStatus: Sendable {
    let value = Mutex<Int32?>(nil)
  }

  /// Starts `process` with every signal unblocked in the calling thread for the moment of the
  /// spawn (the child inherits that mask), then puts the thread's mask back.
  private static func runUnblocked(_ process: Process) throws {
    var none = sigset_t()
    var saved = sigset_t()
    sigemptyset(&none)
    pthread_sigmask(SIG_SETMASK, &none, &saved)
    defer { pthread_sigmask(SIG_SETMASK, &saved, nil) }
    try process.run()
  }

  /// Standard output so far, whole.
  public var output: Data { out.withLock { $0.bytes } }
  /// The complete lines of standard output so far (the last one once the pipe closed).
  public var lines: [String] { out.withLock { $0.lines } }
  /// Standard error so far (empty when it was combined with standard output).
  public var errors: String { String(decoding: err.withLock { $0 }, as: UTF8.self) }
  /// Standard error so far, whole.
  public var errorOutput: Data { err.withLock { $0 } }

  /// The standard output lines that are JSON objects, parsed.
  public var events: [[String: Any]] {
    lines.compactMap {
      (try? JSONSerialization.jsonObject(with: Data($0.utf8))) as? [String: Any]
    }
  }

  /// Waits until `condition` holds, asking it now and at each change of the output, the
  /// pipes or the exit status, for at most `timeout`; returns whether it held. `condition`
  /// reads this process: `server.until { server.errors.contains("listening") }`.
  public func until(
    timeout: Duration = defaultWaitBound, _ condition: () throws -> Bool
  ) async rethrows -> Bool {
    try await changes.wait(timeout: timeout, until: condition)
  }

  /// Waits at most `timeout` for a JSON line of standard output that satisfies `predicate`;
  /// stops waiting early when the process has exited and its output has ended.
  public func waitForEvent(
    timeout: Duration, _ predicate: ([String: Any]) -> Bool
  ) async -> [String: Any]? {
    var found: [String: Any]?
    _ = await until(timeout: timeout) {
      found = events.first(where: predicate)
      return found != nil || (hasExited && isDrained)
    }
    return found
  }

  /// Sends `number` (SIGTERM, SIGINT, …) to the process.
  public func signal(_ number: Int32) { _ = Foundation.kill(pid, number) }

  /// How long a process may take to exit before it counts as hung: 60 s. The wait returns at
  /// the exit, so the bound costs a passing test nothing; it catches a process that never
  /// exits, not a slow one, so a loaded machine does not change the verdict.
  public static let exitBound = Duration.seconds(60)

  /// The exit status (the signal's number when a signal ended it), or `nil` if it still runs
  /// after `timeout` (default ``exitBound``).
  public func exitStatus(timeout: Duration = exitBound) async -> Int32? {
    _ = await until(timeout: timeout) { hasExited }
    return status.value.withLock { $0 }
  }

  /// Waits at most `timeout` until every output pipe reached its end (after the exit, a
  /// grandchild that inherited a pipe can keep it open); returns whether they did.
  public func waitUntilDrained(timeout: Duration) async -> Bool {
    await until(timeout: timeout) { isDrained }
  }

  private var hasExited: Bool { status.value.withLock { $0 } != nil }
  private var isDrained: Bool { drained.withLock { $0 } == readers }

  /// Kills the process with SIGKILL unless it has exited.
  public func kill() {
    if status.value.withLock({ $0 }) == nil { _ = Foundation.kill(pid, SIGKILL) }
  }
}
