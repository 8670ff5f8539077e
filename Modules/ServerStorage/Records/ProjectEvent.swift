public import Foundation

/// A found or lost event of one of a project's devices, as the web console's live view shows
/// it: when, which device, and the message's namespace, type and size (never its content).
public struct ProjectEvent: Sendable, Hashable {
  /// When the event was logged.
  public var createdAt: Date
  /// The device it was addressed to.
  public var device: String
  /// Its place in the device's event sequence.
  public var sequence: UInt64
  /// True for found, false for lost.
  public var found: Bool
  /// The message's namespace ("" for the project's default).
  public var namespace: String
  /// The message's type.
  public var type: String
  /// The size of the message's content, in bytes.
  public var contentBytes: Int
}
