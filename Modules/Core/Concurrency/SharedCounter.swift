import Synchronization

/// A count several tasks change and read, guarded by a mutex (a work group's running pieces,
/// the manager's unread inputs).
final class SharedCounter: Sendable {
  private let count = Mutex(0)

  var value: Int { count.withLock { $0 } }

  func add(_ amount: Int) { count.withLock { $0 += amount } }
}
