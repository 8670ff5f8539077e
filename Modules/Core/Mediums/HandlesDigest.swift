/// A short authenticated digest of what a device publishes and subscribes, under the token it
/// transmits: what peer resolution puts beside the token where a medium has room (the LAN
/// medium's announcements), so a hearer that holds the owner's answer for this digest knows
/// nothing changed without asking.
///
/// It is computed under a key of the project (nobody outside it can make one or test a guess
/// of the contents) over the token too, so it changes with every rotation and links nothing.
/// To a medium it is opaque: 8 bytes carried as they are. Never zero (zero is "none" on the
/// wire).
public struct HandlesDigest: Sendable, Hashable, Codable, CustomStringConvertible {
  /// The digest's 64 bits; never zero.
  public let value: UInt64

  /// The digest of `value`, or nil for zero (no digest).
  public init?(_ value: UInt64) {
    guard value != 0 else { return nil }
    self.value = value
  }

  public var description: String { String(value, radix: 16) }
}
