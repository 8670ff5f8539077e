import Tokens
public import BeaconFrames

/// Narrows a beacon subscription to some beacons by what they advertise, as the original
/// Android API's `includeEddystoneUids` and `includeIBeaconIds` did.
///
/// A subscription with no filters hears every beacon whose attachments match its namespace and
/// type; with filters, only beacons that match at least one of them. Eddystone-EID and
/// AltBeacon beacons never match these filters (an EID is not linkable without the resolver).
public enum BeaconFilter: Sendable, Hashable {
  /// Eddystone-UID beacons of a namespace (10 bytes), and of one instance (6 bytes) if given.
  case eddystoneUID(namespace: BeaconBytes, instance: BeaconBytes?)
  /// iBeacons of a proximity UUID (16 bytes), and of one major and minor if given.
  case iBeacon(uuid: BeaconBytes, major: UInt16?, minor: UInt16?)

  /// An Eddystone-UID filter from hex: namespace 20 hex digits, instance 12.
  /// - Throws: ``BeaconFilterError`` naming the expected length.
  public static func eddystoneUID(namespaceHex: String, instanceHex: String? = nil) throws
    -> BeaconFilter
  {
    let namespace = try BeaconFilterError.bytes(namespaceHex, count: 10, field: "namespace")
    let instance = try instanceHex.map {
      try BeaconFilterError.bytes($0, count: 6, field: "instance")
    }
    return .eddystoneUID(namespace: namespace, instance: instance)
  }

  /// An iBeacon filter from the proximity UUID's text form (`E2C56DB5-DFFB-…`).
  /// - Throws: ``BeaconFilterError`` for text that is not a UUID.
  public static func iBeacon(uuid text: String, major: UInt16? = nil, minor: UInt16? = nil)
    throws -> BeaconFilter
  {
    let hex = String(text.filter { $0 != "-" })
    let uuid = try BeaconFilterError.bytes(hex, count: 16, field: "proximity UUID")
    return .iBeacon(uuid: uuid, major: major, minor: minor)
  }

  /// Whether a beacon advertising `id` matches this filter.
  public func matches(_ id: BeaconID) -> Bool {
    switch (self, id) {
    case (.eddystoneUID(let namespace, let instance), .eddystoneUID(let heardNS, let heardInstance)):
      namespace == heardNS && (instance == nil || instance == heardInstance)
    case (
      .iBeacon(let uuid, let major, let minor),
      .iBeacon(let heardUUID, let heardMajor, let heardMinor)
    ):
      uuid == heardUUID && (major == nil || major == heardMajor)
        && (minor == nil || minor == heardMinor)
    default: false
    }
  }
}

/// Why a ``BeaconFilter`` could not be made.
public struct BeaconFilterError: Error, Sendable, Hashable, CustomStringConvertible {
  public var description: String

  static func bytes(_ hex: String, count: Int, field: String) throws(BeaconFilterError)
    -> BeaconBytes
  {
    guard hex.count == count * 2, let bytes = try? BeaconBytes(hex: hex), bytes.count == count
    else {
      throw BeaconFilterError(
        description: "a beacon filter's \(field) is \(count) bytes (\(count * 2) hex digits), "
          + "got '\(hex.prefix(64))'")
    }
    return bytes
  }
}
