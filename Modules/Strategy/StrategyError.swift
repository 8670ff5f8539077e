/// Why a ``Strategy`` or ``TTL`` was rejected. Each case names the rule it broke.
public enum StrategyError: Error, Sendable, Hashable {
  /// A TTL must be more than 0 and at most 86 400 seconds (or infinite).
  case ttlOutOfRange(seconds: Double)
  /// Background work is BLE-only: `allowInBackground` needs `mediums == .ble`.
  case backgroundRequiresBLEOnly(mediums: DiscoveryMediums)
  /// `DistanceType.earshot` counts audio sightings only, so the mediums must include audio.
  case earshotRequiresAudio(mediums: DiscoveryMediums)
  /// At least one medium is needed.
  case noMediums
  /// The mediums include bits this version has no name for (a plugin's medium must be named
  /// in ``DiscoveryMediums/named`` before strategies may use it).
  case unknownMediums(DiscoveryMediums)
  /// At least one of broadcast and scan is needed.
  case noDiscoveryMode
}

extension StrategyError: CustomStringConvertible {
  public var description: String {
    switch self {
    case .ttlOutOfRange(let seconds):
      return "TTL \(seconds) s is out of range: it must be more than 0 and at most "
        + "\(Int(TTL.maximumSeconds)) s, or infinite"
    case .backgroundRequiresBLEOnly(let mediums):
      return "allowInBackground needs a BLE-only strategy (mediums: ble), got mediums: \(mediums)"
    case .earshotRequiresAudio(let mediums):
      return "distanceType earshot needs the audio medium, got mediums: \(mediums)"
    case .noMediums:
      return "a strategy needs at least one medium "
        + "(\(DiscoveryMediums.named.map(\.name).joined(separator: ", ")))"
    case .unknownMediums(let mediums):
      return "unknown medium bits 0x\(String(mediums.rawValue, radix: 16)) in the strategy; "
        + "known mediums: \(DiscoveryMediums.named.map(\.name).joined(separator: ", "))"
    case .noDiscoveryMode:
      return "a strategy needs at least one discovery mode (broadcast, scan)"
    }
  }
}
