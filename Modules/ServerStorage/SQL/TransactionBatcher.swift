import Synchronization

/// Group commit: transactions submitted while one is being written wait, and then run together
/// in one database transaction, each inside its own savepoint. A body that throws rolls back
/// its savepoint only; the others commit. Under load this turns many small commits (each
/// writing the same few pages to the log) into one, and one hop to the writer per batch.
///
/// Nothing waits on purpose: a transaction submitted to an idle batcher starts at once.
///
/// The batches are written by ``run()``, which its owner (the storage) runs in a task of its
/// own until ``finish()``; a transaction submitted after that fails with
/// ``SQLStorageError/shutDown``.
final class TransactionBatcher: Sendable {
  typealias Work = @Sendable (SQLTransaction) throws -> any Sendable
  /// Runs `body` in one database transaction (committed if it returns).
  typealias RunTransaction =
    @Sendable (@escaping @Sendable (SQLTransaction) throws -> Void) async throws
    -> Void

  private struct Item: Sendable {
    let work: Work
    let continuation: CheckedContinuation<any Sendable, any Error>
  }

  private struct State {
    var queue: [Item] = []
    var running = false
    var finished = false
  }

  private let state = Mutex(State())
  private let run: RunTransaction
  /// The most transactions committed together.
  let maximumBatch: Int

  /// A batch to write: the submission that finds the batcher idle signals ``run()``.
  private let signals: AsyncStream<Void>
  private let signal: AsyncStream<Void>.Continuation

  init(maximumBatch: Int = 256, run: @escaping RunTransaction) {
    self.maximumBatch = max(maximumBatch, 1)
    self.run = run
    (signals, signal) = AsyncStream.makeStream(bufferingPolicy: .bufferingNewest(1))
  }

  /// Writes the batches submitted, until ``finish()``; then fails what still waits.
  func run() async {
    for await _ in signals { await drain() }
    let left = state.withLock { state in
      defer { state.queue.removeAll() }
      return state.queue
    }
    for item in left { item.continuation.resume(throwing: SQLStorageError.shutDown) }
  }

  /// Ends ``run()`` once the batch being written is done; later submissions fail.
  func finish() {
    state.withLock { $0.finished = true }
    signal.finish()
  }

  func submit<T: Sendable>(_ body: @escaping @Sendable (SQLTransaction) throws -> T) async throws
    -> T
  {
    let value = try await withCheckedThrowingContinuation {
      (continuation: CheckedContinuation<any Sendable, any Error>) in
      let start = state.withLock { state -> Bool? in
        guard !state.finished else { return nil }
        state.queue.append(Item(work: { try body($0) }, continuation: continuation))
        guard !state.running else { return false }
        state.running = true
        return true
      }
      switch start {
      case nil: continuation.resume(throwing: SQLStorageError.shutDown)
      case true: signal.yield()
      case false: break
      }
    }
    // `value` is what `body` returned: a `T` by construction.
    return value as! T
  }

  private func drain() async {
    while true {
      let batch = state.withLock { state -> [Item] in
        guard !state.queue.isEmpty else {
          state.running = false
          return []
        }
        let count = min(state.queue.count, maximumBatch)
        defer { state.queue.removeFirst(count) }
        return Array(state.queue.prefix(count))
      }
      if batch.isEmpty { return }
      let results = Mutex<[Result<any Sendable, any Error>]>([])
      do {
        try await run { tx in
          var outcomes: [Result<any Sendable, any Error>] = []
          outcomes.reserveCapacity(batch.count)
          for item in batch {
            // A transaction per item: its caches must not outlive a savepoint that rolls back.
            outcomes.append(
              Result {
                try tx.sql.savepoint {
                  let itemTx = SQLTransaction(tx.sql, deadlineHint: tx.deadlineHint)
                  let result = try item.work(itemTx)
                  try itemTx.finish()
                  return result
                }
              })
          }
          results.withLock { $0 = outcomes }
        }
        let outcomes = results.withLock { $0 }
        for (item, outcome) in zip(batch, outcomes) { item.continuation.resume(with: outcome) }
      } catch {
        for item in batch { item.continuation.resume(throwing: error) }
      }
    }
  }
}
