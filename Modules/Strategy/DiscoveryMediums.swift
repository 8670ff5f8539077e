/// The radio or acoustic channels a publication or subscription may use to find nearby devices.
///
/// The default is every medium (`[.ble, .audio]`), as in the original Nearby Messages API.
/// Encoded as a list of names (`["ble", "audio"]`) so that stored strategies stay readable.
public struct DiscoveryMediums: NamedOptionSet, Hashable {
  public let rawValue: UInt32
  public init(rawValue: UInt32) { self.rawValue = rawValue }

  /// Bluetooth Low Energy advertisements (BlueZ).
  public static let ble = DiscoveryMediums(rawValue: 1 << 0)
  /// Near-ultrasonic audio (PulseAudio).
  public static let audio = DiscoveryMediums(rawValue: 1 << 1)
  /// UDP multicast on the local network segment (the LANMulticast plugin). Not in
  /// ``default``: a network segment can reach well beyond earshot or radio range, so
  /// strategies opt in to it.
  public static let lan = DiscoveryMediums(rawValue: 1 << 2)
  /// A token read by eye or by camera: a device shows its current token as a QR code and a
  /// short code (Tokens' `Token.shortCode`), and a person types it or a camera scans it
  /// into another device (the web page's fallback when a phone does not carry the audio
  /// band). No plugin: the app that read it reports the sighting. Not in ``default``.
  public static let optical = DiscoveryMediums(rawValue: 1 << 3)

  /// Every medium: `[.ble, .audio]`.
  public static let `default`: DiscoveryMediums = [.ble, .audio]

  /// Known single mediums with their wire names, in a stable order.
  public static let named: [(name: String, option: DiscoveryMediums)] = [
    ("ble", .ble), ("audio", .audio), ("lan", .lan), ("optical", .optical),
  ]

  /// Every medium this version knows by name.
  public static let known = DiscoveryMediums(rawValue: named.reduce(0) { $0 | $1.option.rawValue })

  /// The bits of this set that name no known medium (empty for a valid set); ``names`` and
  /// the encoded form leave them out, and ``Strategy/validate()`` rejects them.
  public var unknown: DiscoveryMediums { subtracting(Self.known) }

  public var description: String {
    let unknownPart = unknown.isEmpty ? [] : ["unknown(0x\(String(unknown.rawValue, radix: 16)))"]
    let parts = names + unknownPart
    return parts.isEmpty ? "none" : parts.joined(separator: ",")
  }
}
