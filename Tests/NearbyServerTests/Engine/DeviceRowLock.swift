@_spi(Resolver) import Core
import Dispatch
import Foundation
@_spi(Resolver) @testable import ServerStorage
import Synchronization

/// A device's row held `FOR UPDATE` by a transaction on one instance until the test lets go:
/// what another instance's report meets when it must (or must not) wait for that device. The
/// hold ends after at most 10 s, so a report that waits for it shows as a failure, not a hang.
final class DeviceRowLock: Sendable {
  private let release = DispatchSemaphore(value: 0)
  private let releasedFlag = Mutex(false)
  private let holder: Mutex<Task<Void, any Error>?> = Mutex(nil)

  /// Whether the hold has ended (the test let go, or the 10 s ran out).
  var released: Bool { releasedFlag.withLock { $0 } }

  /// Returns once `storage` holds `device`'s row; `then` runs under the lock first (a change
  /// the holding transaction commits).
  static func hold(
    _ device: DeviceID, on storage: any ResolverStorage,
    then change: @escaping @Sendable (SQLTransaction) throws -> Void = { _ in }
  ) async -> DeviceRowLock {
    let lock = DeviceRowLock()
    let holding = AsyncStream.makeStream(of: Void.self)
    let task = Task {
      try await storage.transaction { store in
        _ = try store.sql.query(
          "SELECT id FROM devices WHERE id = ? FOR UPDATE", [.text(device.description)])
        try change(store)
        holding.continuation.yield()
        _ = lock.release.wait(timeout: .now() + 10)
        lock.releasedFlag.withLock { $0 = true }
      }
    }
    lock.holder.withLock { $0 = task }
    var started = holding.stream.makeAsyncIterator()
    _ = await started.next()
    return lock
  }

  /// Lets go and awaits the holding transaction's end.
  /// - Throws: the transaction's error.
  func end() async throws {
    release.signal()
    try await holder.withLock { $0 }?.value
  }
}
