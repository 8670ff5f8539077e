public import Core
import Foundation
import OpenAPIRuntime
public import ResolverAPI
import Tokens

// Beacons: observed ids and the beacon answers of `beaconinfo:getforobserved`.

extension Components.Schemas.AdvertisedID {
  /// The wire form of an observed id: its kind and its bytes as lower-case hex.
  public init(_ id: BeaconID) {
    self.init(_type: _TypePayload(id.kind), id: id.hex)
  }

  /// The library's id.
  /// - Throws: ``WireError`` naming the field for text that is not the kind's length in
  ///   strictly ASCII hex digits.
  public func beaconID(field: String = "advertisedId") throws(WireError) -> BeaconID {
    let kind = BeaconID.Kind(_type)
    guard id.utf8.count == kind.byteCount * 2, let bytes = Hex.decode(id),
      let beaconID = BeaconID(kind: kind, bytes: bytes)
    else {
      throw WireError(
        "\(field).id: a \(_type.rawValue) id is \(kind.byteCount * 2) hex digits "
          + "(\(kind.byteCount) bytes), got "
          + "'\(id.unicodeScalars.prefix(64).map { $0.escaped(asASCII: true) }.joined())'")
    }
    return beaconID
  }
}

extension Components.Schemas.AdvertisedID._TypePayload {
  /// The wire's name for a kind of beacon id.
  public init(_ kind: BeaconID.Kind) {
    self =
      switch kind {
      case .eddystoneUID: .eddystone
      case .eddystoneEID: .eddystoneEid
      case .iBeacon: .ibeacon
      case .altBeacon: .altbeacon
      }
  }
}

extension BeaconID.Kind {
  /// The library's kind for the wire's `AdvertisedID.type`.
  public init(_ type: Components.Schemas.AdvertisedID._TypePayload) {
    self =
      switch type {
      case .eddystone: .eddystoneUID
      case .eddystoneEid: .eddystoneEID
      case .ibeacon: .iBeacon
      case .altbeacon: .altBeacon
      }
  }
}

extension Components.Schemas.Attachment {
  /// The library's attachment.
  /// - Throws: ``WireError`` for a `namespacedType` that is not `namespace/type`, or data
  ///   that is not canonical base64.
  public func beaconAttachment() throws(WireError) -> BeaconAttachment {
    guard let slash = namespacedType.firstIndex(of: "/") else {
      throw WireError("attachment \(attachmentName): namespacedType '\(namespacedType)' has no '/'")
    }
    return BeaconAttachment(
      name: attachmentName, namespace: String(namespacedType[..<slash]),
      type: String(namespacedType[namespacedType.index(after: slash)...]),
      data: Data(try StrictBase64.decode(data, field: "attachment \(attachmentName).data")),
      isShared: shared ?? false, maxDistance: maxDistanceMeters)
  }
}

extension Components.Schemas.Beacon {
  /// The answer for `observed`, the id this beacon was found by.
  /// - Throws: ``WireError`` for a malformed attachment.
  public func beaconInfo(observed: BeaconID) throws(WireError) -> BeaconInfo {
    var converted: [BeaconAttachment] = []
    for attachment in attachments { converted.append(try attachment.beaconAttachment()) }
    return BeaconInfo(observed: observed, beaconName: beaconName, attachments: converted)
  }
}
