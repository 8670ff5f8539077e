import Foundation

/// What a project holds: devices, and bytes of messages and attachments.
public struct ProjectUsage: Sendable, Hashable {
  public var devices = 0
  /// Bytes of the contents of live publications and of beacon attachments' data.
  public var storedBytes = 0

  public init(devices: Int = 0, storedBytes: Int = 0) {
    self.devices = devices
    self.storedBytes = storedBytes
  }
}
