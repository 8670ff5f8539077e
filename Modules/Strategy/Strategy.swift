/// How a publication or subscription discovers nearby devices: which mediums, whether it
/// broadcasts and/or scans, whether it may run in background, the distance type and its TTL.
///
/// `Strategy` is a value: build it, then call ``validate()`` (publish and subscribe do so and
/// throw ``StrategyError`` when a rule is broken).
public struct Strategy: Sendable, Hashable, Codable {
  /// The mediums to use. Default: ble and audio.
  public var mediums: DiscoveryMediums
  /// Broadcast, scan, or both (the default).
  public var mode: DiscoveryMode
  /// Whether this work keeps running while the app is in background. BLE-only.
  public var allowInBackground: Bool
  /// How near counts as nearby. Default: whatever the mediums reach.
  public var distanceType: DistanceType
  /// How long the work stays active. Default: 300 s.
  public var ttl: TTL

  public init(
    mediums: DiscoveryMediums = .default,
    mode: DiscoveryMode = .default,
    allowInBackground: Bool = false,
    distanceType: DistanceType = .default,
    ttl: TTL = .default
  ) {
    self.mediums = mediums
    self.mode = mode
    self.allowInBackground = allowInBackground
    self.distanceType = distanceType
    self.ttl = ttl
  }

  /// Every medium, broadcast and scan, 300 s.
  public static let `default` = Strategy()
  /// BLE only, broadcast and scan: the strategy background work needs.
  public static let bleOnly = Strategy(mediums: .ble)

  /// Checks the rules between fields.
  /// - Throws: ``StrategyError`` naming the rule that is broken.
  public func validate() throws(StrategyError) {
    if mediums.isEmpty { throw .noMediums }
    if !mediums.unknown.isEmpty { throw .unknownMediums(mediums.unknown) }
    if mode.isEmpty { throw .noDiscoveryMode }
    if allowInBackground && mediums != .ble { throw .backgroundRequiresBLEOnly(mediums: mediums) }
    if distanceType == .earshot && !mediums.contains(.audio) {
      throw .earshotRequiresAudio(mediums: mediums)
    }
  }

  /// The mediums whose sightings count for this strategy: ``mediums``, narrowed to audio
  /// when the distance type is ``DistanceType/earshot``.
  public var effectiveMediums: DiscoveryMediums {
    distanceType == .earshot ? mediums.intersection(.audio) : mediums
  }

  /// Whether this strategy broadcasts on `medium` (a single medium).
  public func broadcasts(on medium: DiscoveryMediums) -> Bool {
    mode.contains(.broadcast) && effectiveMediums.contains(medium)
  }

  /// Whether this strategy scans on `medium` (a single medium).
  public func scans(on medium: DiscoveryMediums) -> Bool {
    mode.contains(.scan) && effectiveMediums.contains(medium)
  }
}
