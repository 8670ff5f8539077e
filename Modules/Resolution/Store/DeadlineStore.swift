public import Foundation

/// The part of a ``ResolutionStore`` that holds the engine's deadlines, by time.
public protocol DeadlineStore: AnyObject {
  func schedule(_ deadline: Deadline) throws
  /// Removes and returns the earliest deadline at or before `now`.
  func popDeadline(dueAt now: Date) throws -> Deadline?
  func nextDeadline() throws -> Date?
}
