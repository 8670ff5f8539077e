public import Foundation
import Synchronization

/// What a single-writer storage (SQLite) remembers between transactions about its deadlines:
/// none is due before ``earliest``. Reports use it to skip looking for due deadlines when
/// none can be due; the sweeper always looks, so a hint that is too late (a transaction that
/// set it rolled back) delays a deadline by one sweep interval at most, never loses it.
public final class DeadlineHint: Sendable {
  private let value = Mutex<Date?>(nil)

  public init() {}

  /// The earliest time a deadline may be due; `nil`: unknown.
  public var earliest: Date? { value.withLock { $0 } }

  /// A deadline at `time` was scheduled.
  func lower(to time: Date) {
    value.withLock { current in
      if let known = current, known <= time { return }
      current = time
    }
  }

  /// The earliest deadline is at `time` (`nil`: there is none).
  func set(_ time: Date?) {
    value.withLock { $0 = time ?? .distantFuture }
  }
}
