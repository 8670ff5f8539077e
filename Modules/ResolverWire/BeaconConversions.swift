public import Core
import Foundation
import OpenAPIRuntime
public import ResolverAPI
import Tokens

// Beacons: observed ids and the beacon answers of `beaconinfo:getforobserved`.

extension Components.Schemas.AdvertisedID {
  /// The wire form of an observed id: its kind and its bytes as lower-case hex.
  public init(_ id: BeaconID) {
    let type: _TypePayload =
      switch id {
      case .eddystoneUID: .eddystone
      case .eddystoneEID: .eddystoneEid
      case .iBeacon: .ibeacon
      case .altBeacon: .altbeacon
      }
    self.init(_type: type, id: id.hex)
  }

  /// The library's id.
  /// - Throws: ``WireError`` naming the field for hex that is not the kind's length.
  public func beaconID(field: String = "advertisedId") throws(WireError) -> BeaconID {
    let expected =
      switch _type {
      case .eddystone: 16
      case .eddystoneEid: 8
      case .ibeacon, .altbeacon: 20
      }
    // Strictly ASCII hex digits, two per byte (BeaconBytes(hex:) also skips separators).
    let isHex = id.utf8.allSatisfy { byte in
      switch byte {
      case UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "a")...UInt8(ascii: "f"),
        UInt8(ascii: "A")...UInt8(ascii: "F"):
        true
      default: false
      }
    }
    guard isHex, id.utf8.count == expected * 2, let bytes = try? BeaconBytes(hex: id),
      bytes.count == expected
    else {
      throw WireError(
        "\(field).id: a \(_type.rawValue) id is \(expected * 2) hex digits, got "
          + "'\(id.unicodeScalars.prefix(64).map { $0.escaped(asASCII: true) }.joined())'")
    }
    let all = Array(bytes)
    do {
      switch _type {
      case .eddystone:
        return .eddystoneUID(
          namespace: try BeaconBytes(all[0..<10]), instance: try BeaconBytes(all[10..<16]))
      case .eddystoneEid: return .eddystoneEID(bytes)
      case .ibeacon:
        return .iBeacon(
          uuid: try BeaconBytes(all[0..<16]), major: UInt16(all[16]) << 8 | UInt16(all[17]),
          minor: UInt16(all[18]) << 8 | UInt16(all[19]))
      case .altbeacon: return .altBeacon(bytes)
      }
    } catch {
      throw WireError("\(field).id: \(error)")
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
      data: Data(try StrictBase64.decode(data, field: "attachment \(attachmentName).data")))
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
