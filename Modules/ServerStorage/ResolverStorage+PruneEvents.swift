public import Foundation

extension ResolverStorage {
  /// Forgets the events created before `time`, `chunk` at a time, each chunk in its own
  /// transaction: a log grown large (a full disk) frees itself without one transaction that
  /// holds it all. Returns how many.
  /// - Throws: the database's error (chunks done before it stay done).
  @discardableResult
  public func pruneEvents(before time: Date, chunk: Int = 10_000) async throws -> Int {
    var total = 0
    while !Task.isCancelled {
      let pruned = try await transaction { tx in
        try tx.eventLog.pruneEvents(before: time, limit: chunk)
      }
      total += pruned
      if pruned < chunk { break }
    }
    return total
  }
}
