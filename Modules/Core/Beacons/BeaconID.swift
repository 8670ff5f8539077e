import Tokens
public import BeaconFrames

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

  /// The kind of id, whose raw value is the resolver's name for it.
  public enum Kind: String, Sendable, Hashable, CaseIterable {
    /// Eddystone-UID: namespace + instance, 16 bytes.
    case eddystoneUID = "eddystone"
    /// Eddystone-EID: the ephemeral id, 8 bytes.
    case eddystoneEID = "eddystone-eid"
    /// iBeacon: proximity UUID + major + minor, 20 bytes.
    case iBeacon = "ibeacon"
    /// AltBeacon: the beacon id, 20 bytes.
    case altBeacon = "altbeacon"

    /// The id's length in bytes.
    public var byteCount: Int {
      switch self {
      case .eddystoneUID: 16
      case .eddystoneEID: 8
      case .iBeacon, .altBeacon: 20
      }
    }
  }

  /// The id of `kind` made of `bytes` (as ``bytes`` lays them out); `nil` unless there are
  /// exactly ``Kind/byteCount`` of them.
  public init?(kind: Kind, bytes: some Collection<UInt8>) {
    guard bytes.count == kind.byteCount else { return nil }
    let all = Array(bytes)
    // Every field is at most 20 bytes, all BeaconBytes holds: `field` never fails.
    func field(_ range: Range<Int>) -> BeaconBytes? { try? BeaconBytes(all[range]) }
    switch kind {
    case .eddystoneUID:
      guard let namespace = field(0..<10), let instance = field(10..<16) else { return nil }
      self = .eddystoneUID(namespace: namespace, instance: instance)
    case .eddystoneEID:
      guard let eid = field(0..<8) else { return nil }
      self = .eddystoneEID(eid)
    case .iBeacon:
      guard let uuid = field(0..<16) else { return nil }
      self = .iBeacon(
        uuid: uuid, major: UInt16(all[16]) << 8 | UInt16(all[17]),
        minor: UInt16(all[18]) << 8 | UInt16(all[19]))
    case .altBeacon:
      guard let id = field(0..<20) else { return nil }
      self = .altBeacon(id)
    }
  }

  /// The kind of id.
  public var kind: Kind {
    switch self {
    case .eddystoneUID: .eddystoneUID
    case .eddystoneEID: .eddystoneEID
    case .iBeacon: .iBeacon
    case .altBeacon: .altBeacon
    }
  }

  /// The resolver's name for the kind of id: `eddystone`, `eddystone-eid`, `ibeacon`,
  /// `altbeacon` (``Kind``'s raw value, the wire's `AdvertisedID.type`).
  public var kindName: String { kind.rawValue }

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
  public var hex: String { Hex.encode(bytes) }
}

extension BeaconID: CustomStringConvertible {
  /// `kind!hex`, the server's beacon name form.
  public var description: String { "\(kindName)!\(hex)" }
}
