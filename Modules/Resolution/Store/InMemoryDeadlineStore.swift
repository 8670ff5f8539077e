public import Foundation
import HeapModule

/// The deadlines of an ``InMemoryResolutionStore``, in a heap by time.
///
/// Not thread-safe: it belongs to its store, which belongs to one engine.
public final class InMemoryDeadlineStore: DeadlineStore {
  private(set) var deadlines = Heap<Deadline>()

  init() {}

  public func schedule(_ deadline: Deadline) { deadlines.insert(deadline) }

  public func popDeadline(dueAt now: Date) -> Deadline? {
    guard let first = deadlines.min, first.at <= now else { return nil }
    return deadlines.removeMin()
  }

  public func nextDeadline() -> Date? { deadlines.min?.at }
}
