/// The kinds of beacon frame this module reads and writes; the raw value is the name the CLI
/// prints (`kind` in its JSON).
public enum BeaconKind: String, Sendable, Hashable, CaseIterable {
  /// Eddystone-UID: namespace and instance.
  case eddystoneUID = "eddystone-uid"
  /// Eddystone-URL: a compressed URL.
  case eddystoneURL = "eddystone-url"
  /// Eddystone-TLM, plain or encrypted: telemetry.
  case eddystoneTLM = "eddystone-tlm"
  /// Eddystone-EID: an ephemeral identifier.
  case eddystoneEID = "eddystone-eid"
  /// Apple iBeacon.
  case iBeacon = "ibeacon"
  /// AltBeacon.
  case altBeacon = "altbeacon"
}

extension BeaconKind: CustomStringConvertible {
  public var description: String { rawValue }
}
