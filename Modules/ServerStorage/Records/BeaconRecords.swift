public import Core
public import Foundation
public import Resolution

/// Data attached to a beacon for one `namespace/type`.
public struct AttachmentRecord: Sendable, Hashable {
  /// The most bytes of data an attachment holds.
  public static let maximumDataBytes = 1024

  public var name: String
  public var namespace: String
  public var type: String
  public var data: [UInt8]
  public var createdAt: Date
  /// Delivered only while the beacon is estimated this close, if set.
  public var maxDistanceMeters: Double?

  public var namespacedType: String { "\(namespace)/\(type)" }
}

/// A registered beacon with its attachments.
public struct BeaconRecord: Sendable, Hashable {
  public var project: String
  public var advertisedID: BeaconID
  public var description: String
  public var createdAt: Date
  public var attachments: [AttachmentRecord]
  /// An Eddystone-EID beacon's parameters (the identity key is secret: never answer it).
  public var eid: EddystoneEIDRegistration?
  /// Where it is in its life: only an active beacon's attachments are served.
  public var status: BeaconStatus = .active
  /// The operator's description of where and what it is.
  public var metadata = BeaconMetadata()

  public var name: String { advertisedID.name }
}

/// An attachment to add: `namespace/type` and data, checked against the limits.
public struct NewAttachment: Sendable, Hashable {
  public var namespace: String
  public var type: String
  public var data: [UInt8]
  /// Delivered only while the beacon is estimated this close (metres), if set.
  public var maxDistanceMeters: Double?

  /// The range ``maxDistanceMeters`` may take, in metres.
  public static let distanceRange = 0.1...1000.0

  /// - Throws: ``BeaconInputError`` for a malformed `namespacedType`, data over
  ///   ``AttachmentRecord/maximumDataBytes``, or a distance outside ``distanceRange``.
  public init(namespacedType: String, data: [UInt8], maxDistanceMeters: Double? = nil)
    throws(BeaconInputError)
  {
    if let maxDistanceMeters, !Self.distanceRange.contains(maxDistanceMeters) {
      throw .invalid(
        "maxDistanceMeters must be \(Self.distanceRange.lowerBound) to "
          + "\(Self.distanceRange.upperBound) metres, got \(maxDistanceMeters)")
    }
    self.maxDistanceMeters = maxDistanceMeters
    let parts = namespacedType.split(separator: "/", omittingEmptySubsequences: false)
    guard parts.count == 2, !parts[0].isEmpty, !parts[1].isEmpty else {
      throw .invalid(
        "namespacedType must be 'namespace/type', got '\(TextRules.printable(namespacedType))'")
    }
    let (namespace, type) = (String(parts[0]), String(parts[1]))
    guard namespace.utf8.count <= 64,
      namespace.utf8.allSatisfy({ byte in
        switch byte {
        case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"),
          UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "."), UInt8(ascii: "_"),
          UInt8(ascii: "-"):
          true
        default: false
        }
      })
    else {
      throw .invalid(
        "namespacedType: the namespace must be 1 to 64 characters of [A-Za-z0-9._-], "
          + "got '\(TextRules.printable(namespace))'")
    }
    try TextRules.check(
      type, field: "namespacedType's type", maximumBytes: Message.maximumTypeLength)
    guard data.count <= AttachmentRecord.maximumDataBytes else {
      throw .overLimit(
        "attachment data is \(data.count) bytes; the limit is \(AttachmentRecord.maximumDataBytes) bytes"
      )
    }
    self.namespace = namespace
    self.type = type
    self.data = data
  }
}
