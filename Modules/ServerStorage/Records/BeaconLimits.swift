/// How much one project may register: the work a beacon costs grows with these (every
/// `getforobserved` looks among the project's beacons; every EID beacon is in the project's
/// EID index, with one entry per rotation period of the index's span).
public struct BeaconLimits: Sendable, Hashable {
  /// The most beacons a project keeps. Default 100 000.
  public var maximumBeaconsPerProject = 100_000
  /// The most Eddystone-EID beacons a project keeps. Default 10 000.
  public var maximumEIDBeaconsPerProject = 10_000
  /// The most attachments one beacon holds. Default 100.
  public var maximumAttachmentsPerBeacon = 100
  /// The smallest EID rotation exponent accepted (a period of 2^K s): with K = 6 (64 s) a
  /// matched beacon has about 5 entries in an index built for a minute and its window either
  /// way (37 when unmatched for long: the window widens by 32 periods behind), where K = 0
  /// would give it more than 120. Default 6; Eddystone allows 0 to 15.
  public var minimumEIDRotationExponent = 6

  public init() {}
}
