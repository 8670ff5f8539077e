import Foundation
import Logging
import Synchronization

/// The part of a ``DefaultsStore`` its I/O thread runs: reads and writes of the file under its
/// lock, and the shared snapshot that readers on any thread see.
final class StoreCore: Sendable {
  typealias Mutation = @Sendable (inout [String: StoreValue]) throws -> StoreValue?

  enum Job: Sendable {
    /// Apply `mutation` under the exclusive lock and write the file durably.
    case write(Mutation, CheckedContinuation<StoreValue?, any Error>)
    /// Re-read the file if another writer replaced it.
    case refresh(CheckedContinuation<Void, any Error>?)
  }

  struct State {
    var values: [String: StoreValue] = [:]
    /// The file version the snapshot was read from or written as.
    var version: [Int]?
    var subscribers: [UInt64: AsyncStream<StoreEvent>.Continuation] = [:]
    var nextSubscriber: UInt64 = 0
    var corruptFiles: [CorruptFile] = []
    var closed = false
  }

  let file: StoreFile
  let state = Mutex(State())
  let logger: Logger

  init(file: StoreFile, logger: Logger) {
    self.file = file
    self.logger = logger
  }

  // MARK: On the I/O thread

  /// Runs one batch: consecutive writes share one lock, one read and one durable write.
  func process(_ jobs: [Job]) {
    var writes: [(Mutation, CheckedContinuation<StoreValue?, any Error>)] = []
    var refreshes: [CheckedContinuation<Void, any Error>?] = []
    for job in jobs {
      switch job {
      case .write(let mutation, let continuation): writes.append((mutation, continuation))
      case .refresh(let continuation): refreshes.append(continuation)
      }
    }
    if !refreshes.isEmpty {
      do {
        try refresh()
        for continuation in refreshes { continuation?.resume() }
      } catch {
        logger.error("reading the store failed", metadata: ["error": "\(error)"])
        for continuation in refreshes { continuation?.resume(throwing: error) }
      }
    }
    if !writes.isEmpty { commit(writes) }
  }

  /// Re-reads the file when its version differs from the snapshot's.
  func refresh() throws {
    guard file.version() != state.withLock({ $0.version }) else { return }
    try file.withLock(exclusive: true) {
      let (values, corrupt) = try readMovingAsideIfCorrupt()
      adopt(values, origin: .elsewhere, corrupt: corrupt)
    }
  }

  private func commit(_ writes: [(Mutation, CheckedContinuation<StoreValue?, any Error>)]) {
    var results: [Result<StoreValue?, any Error>] = []
    do {
      try file.withLock(exclusive: true) {
        let (before, corrupt) = try readMovingAsideIfCorrupt()
        adopt(before, origin: .elsewhere, corrupt: corrupt)
        var values = before
        for (mutation, _) in writes {
          var candidate = values
          do {
            let result = try mutation(&candidate)
            values = candidate
            results.append(.success(result))
          } catch {
            results.append(.failure(error))
          }
        }
        if values != before || file.version() == nil {
          try file.write(values)
        }
        adopt(values, origin: .thisStore)
      }
    } catch {
      logger.error("writing the store failed", metadata: ["error": "\(error)"])
      for (_, continuation) in writes { continuation.resume(throwing: error) }
      return
    }
    for ((_, continuation), result) in zip(writes, results) { continuation.resume(with: result) }
  }

  /// Reads the file (lock held); an unreadable one is moved aside and logged, and the store
  /// starts clean: the caller adopts the empty values together with the corrupt file, so that
  /// a subscriber told of the corruption already reads the clean snapshot.
  private func readMovingAsideIfCorrupt() throws -> ([String: StoreValue], CorruptFile?) {
    switch file.read() {
    case .missing: return ([:], nil)
    case .values(let values): return (values, nil)
    case .unreadable(let reason):
      let corrupt = try file.moveAside(reason: reason)
      logger.error(
        "the store file was unreadable; moved it aside and started clean",
        metadata: [
          "file": "\(file.file.path)", "moved_to": "\(corrupt.movedTo.path)",
          "reason": "\(reason)",
        ])
      return ([:], corrupt)
    }
  }

  /// Makes `values` the snapshot (lock held, so the file version matches), records `corrupt`
  /// in the same step, and then tells subscribers of the corruption and of the keys changed.
  private func adopt(
    _ values: [String: StoreValue], origin: StoreEvent.Origin, corrupt: CorruptFile? = nil
  ) {
    let version = file.version()
    let (keys, subscribers) = state.withLock { state in
      let old = state.values
      state.values = values
      state.version = version
      if let corrupt { state.corruptFiles.append(corrupt) }
      let keys = Set(old.keys).union(values.keys).filter { old[$0] != values[$0] }
      return (keys, Array(state.subscribers.values))
    }
    // Yielded outside the lock: a yield can wake a reader, which takes that reader's task
    // lock, while a reader being cancelled holds its task lock and takes ours (to forget its
    // stream): both under one lock deadlocked.
    if let corrupt {
      for continuation in subscribers { continuation.yield(.corruptFileMovedAside(corrupt)) }
    }
    guard !keys.isEmpty else { return }
    for continuation in subscribers { continuation.yield(.changed(keys: keys, origin: origin)) }
  }

  /// Fails the writes still queued when the store closes, and closes the files.
  func drain(_ jobs: [Job]) {
    for job in jobs {
      switch job {
      case .write(_, let continuation): continuation.resume(throwing: StoreError.closed)
      case .refresh(let continuation): continuation?.resume(throwing: StoreError.closed)
      }
    }
    file.close()
    let subscribers = state.withLock { state in
      defer { state.subscribers.removeAll() }
      return state.subscribers.values
    }
    for continuation in subscribers { continuation.finish() }
  }
}
