public import Tokens

/// What identifies a beacon to the resolver: the identifier its frame advertises.
///
/// Telemetry and URL frames identify nothing (``init(frame:)`` is `nil` for them). An
/// Eddystone-EID is a rotating identifier that only the resolver, which knows the beacon's
/// identity key, can link to a registered beacon.
public enum BeaconID: Sendable, Hashable {
  /// Eddystone-UID: namespace (10 bytes) and instance (6 bytes).
  case eddystoneUID(namespace: BeaconBytes, instance: BeaconBytes)
  /// Eddystone-EID: the 8-byte ephemeral identifier heard now.
  case eddystoneEID(BeaconBytes)
  /// iBeacon: proximity UUID (16 bytes), major and minor.
  case iBeacon(uuid: BeaconBytes, major: UInt16, minor: UInt16)
  /// AltBeacon: the 20-byte beacon id.
  case altBeacon(BeaconBytes)

  /// The identifier a frame advertises; `nil` for URL and telemetry frames.
  public init?(frame: BeaconFrame) {
    switch frame {
    case .eddystoneUID(let uid):
      self = .eddystoneUID(namespace: uid.namespace, instance: uid.instance)
    case .eddystoneEID(let eid): self = .eddystoneEID(eid.ephemeralID)
    case .iBeacon(let beacon):
      self = .iBeacon(uuid: beacon.proximityUUID, major: beacon.major, minor: beacon.minor)
    case .altBeacon(let beacon): self = .altBeacon(beacon.beaconID)
    case .eddystoneURL, .eddystoneTLM, .eddystoneEncryptedTLM: return nil
    }
  }

  /// The resolver's name for the kind of id: `eddystone`, `eddystone-eid`, `ibeacon`,
  /// `altbeacon` (as in the server's `AdvertisedID.type`).
  public var kindName: String {
    switch self {
    case .eddystoneUID: "eddystone"
    case .eddystoneEID: "eddystone-eid"
    case .iBeacon: "ibeacon"
    case .altBeacon: "altbeacon"
    }
  }

  /// The advertised bytes: namespace + instance (16), EID (8), UUID + major + minor (20),
  /// or the AltBeacon id (20).
  public var bytes: [UInt8] {
    switch self {
    case .eddystoneUID(let namespace, let instance): namespace.bytes + instance.bytes
    case .eddystoneEID(let eid): eid.bytes
    case .iBeacon(let uuid, let major, let minor):
      uuid.bytes + [UInt8(major >> 8), UInt8(major & 0xff), UInt8(minor >> 8), UInt8(minor & 0xff)]
    case .altBeacon(let id): id.bytes
    }
  }

  /// ``bytes`` as lower-case hex.
  public var hex: String {
    let digits = Array("0123456789abcdef")
    return String(bytes.flatMap { [digits[Int($0 >> 4)], digits[Int($0 & 0x0f)]] })
  }
}

extension BeaconID: CustomStringConvertible {
  /// `kind!hex`, the server's beacon name form.
  public var description: String { "\(kindName)!\(hex)" }
}
