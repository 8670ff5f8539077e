import CSystemd
import Dispatch
import Foundation
import Synchronization

/// Sends journal entries with `sd_journal_sendv(3)` from a dedicated thread: logging callers
/// only queue (at most ``capacity`` entries; beyond that the oldest are dropped and the count
/// is written to the journal once there is room).
public final class JournalWriter: Sendable {
  /// The process's writer (started on first use).
  public static let shared = JournalWriter()

  /// Queued entries beyond this are dropped, oldest first.
  public let capacity: Int

  private struct State {
    var queue: [[(String, String)]] = []
    var dropped = 0
    var sent = 0
    var failed = 0
    /// Entries queued and entries handled (sent, failed or dropped) so far.
    var queued = 0
    var handled = 0
  }
  private final class Shared: Sendable {
    let state = Mutex(State())
    let wakeUp = DispatchSemaphore(value: 0)
  }
  private let shared = Shared()

  public init(capacity: Int = 10_000) {
    self.capacity = capacity
    let thread = Thread { [shared] in
      while true {
        shared.wakeUp.wait()
        let (entries, dropped) = shared.state.withLock { state in
          defer {
            state.queue.removeAll(keepingCapacity: true)
            state.dropped = 0
          }
          return (state.queue, state.dropped)
        }
        var results: [Bool] = []
        if dropped > 0 {
          results.append(
            Self.send([
              ("MESSAGE", "the journal writer dropped \(dropped) log entries (queue full)"),
              ("PRIORITY", "4"),
            ]))
        }
        for entry in entries { results.append(Self.send(entry)) }
        let ok = results.filter { $0 }.count
        shared.state.withLock {
          $0.sent += ok
          $0.failed += results.count - ok
          $0.handled += entries.count + dropped
        }
      }
    }
    thread.name = "nearby.journal"
    thread.start()
  }

  /// Queues one entry of `(FIELD, value)` pairs.
  public func send(_ fields: [(String, String)]) {
    shared.state.withLock { state in
      if state.queue.count >= capacity {
        state.queue.removeFirst()
        state.dropped += 1
      }
      state.queue.append(fields)
      state.queued += 1
    }
    shared.wakeUp.signal()
  }

  /// Entries sent so far, and entries the journal refused (no journald, a field too large).
  public var counts: (sent: Int, failed: Int) {
    shared.state.withLock { ($0.sent, $0.failed) }
  }

  /// Waits until every entry queued so far was handed to the journal, at most `timeout`
  /// (call it before the process exits). Returns whether everything was handed over.
  @discardableResult
  public func flush(timeout: Duration = .seconds(1)) async -> Bool {
    let target = shared.state.withLock { $0.queued }
    let deadline = ContinuousClock.now + timeout
    while shared.state.withLock({ $0.handled < target }) {
      guard ContinuousClock.now < deadline else { return false }
      try? await Task.sleep(for: .milliseconds(1))
    }
    return true
  }

  /// One `sd_journal_sendv` call; true when the journal took it.
  private static func send(_ fields: [(String, String)]) -> Bool {
    let buffers = fields.map { Array("\($0.0)=\($0.1)".utf8) }
    var pointers: [UnsafeMutablePointer<UInt8>] = []
    defer { for pointer in pointers { pointer.deallocate() } }
    var vectors: [iovec] = []
    for buffer in buffers {
      let pointer = UnsafeMutablePointer<UInt8>.allocate(capacity: max(buffer.count, 1))
      pointer.initialize(from: buffer, count: buffer.count)
      pointers.append(pointer)
      vectors.append(iovec(iov_base: UnsafeMutableRawPointer(pointer), iov_len: buffer.count))
    }
    return sd_journal_sendv(&vectors, Int32(vectors.count)) == 0
  }
}
