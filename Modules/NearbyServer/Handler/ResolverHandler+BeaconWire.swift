import Core
import Foundation
import OpenAPIRuntime
import Resolution
import ResolverAPI
@_spi(Resolver) import ResolverWire
import ServerStorage
import Tokens

/// The beacon handlers' input checks and their conversions between the wire's types and the
/// storage's records. Conversions that need no storage type are ResolverWire's (an advertised
/// id is parsed there, once); these need the records of ServerStorage, which ResolverWire, a
/// client-side module too, does not depend on.
extension ResolverHandler {
  /// Checks a text field's length (UTF-8 bytes) and characters (no controls).
  /// - Throws: ``APIFailure``: 422 over the limit, 400 for a control character.
  static func check(_ text: String, field: String, maximumBytes: Int) throws {
    do { try TextRules.check(text, field: field, maximumBytes: maximumBytes) } catch {
      throw failure(for: error)
    }
  }

  /// A beacon or attachment name from the path: one that breaks the text rules (too long, a
  /// control character) is malformed, 400, and never reaches the database; any other is looked
  /// up (404 if unknown).
  static func pathName(_ name: String, field: String) throws -> String {
    do { try TextRules.check(name, field: field, maximumBytes: maximumPathNameBytes) } catch {
      throw APIFailure.badRequest(error.description)
    }
    return name
  }

  /// `timestampMs`: milliseconds since 1970 as 1 to 19 decimal digits.
  static func checkTimestamp(_ text: String, field: String) throws {
    let utf8 = text.utf8
    guard (1...19).contains(utf8.count),
      utf8.allSatisfy({ (UInt8(ascii: "0")...UInt8(ascii: "9")).contains($0) })
    else {
      throw APIFailure.badRequest(
        "\(field) must be milliseconds since 1970 (1 to 19 digits), got "
          + "'\(TextRules.printable(text))'")
    }
  }

  static func failure(for error: BeaconInputError) -> APIFailure {
    switch error {
    case .invalid(let why): .badRequest(why)
    case .overLimit(let why): .limitExceeded(why)
    case .notOwned(let why): .forbidden(why)
    case .conflict(let why): APIFailure(.conflict, "conflict", why)
    }
  }

  // MARK: Conversions

  /// The EID parameters of a registration, checked against the id the beacon broadcasts.
  static func eidRegistration(
    _ wire: Components.Schemas.EIDRegistration?, for id: BeaconID, now: Date,
    minimumRotationExponent: Int, servicePrivateKey: [UInt8]? = nil
  ) throws -> EddystoneEIDRegistration? {
    guard let wire else {
      guard id.kind != .eddystoneEID else {
        throw APIFailure.badRequest(
          "an eddystone-eid beacon needs eid: {identityKey, rotationExponent, clockValue}")
      }
      return nil
    }
    guard id.kind == .eddystoneEID else {
      throw APIFailure.badRequest(
        "eid is for eddystone-eid beacons; advertisedId.type is \(id.kind.rawValue)")
    }
    let key = try identityKey(wire, servicePrivateKey: servicePrivateKey)
    let clock = wire.clockValue ?? 0
    guard let clockValue = UInt32(exactly: clock) else {
      throw APIFailure.badRequest("eid.clockValue must be 0 to 4294967295, got \(clock)")
    }
    let exponents = minimumRotationExponent...EddystoneEIDGenerator.maximumRotationExponent
    guard exponents.contains(wire.rotationExponent) else {
      throw APIFailure.badRequest(
        "eid.rotationExponent must be \(exponents.lowerBound) to \(exponents.upperBound) "
          + "(a rotation period of \(1 << exponents.lowerBound) s or more), got "
          + "\(wire.rotationExponent)")
    }
    let parameters = EddystoneEIDParameters(
      identityKey: key, rotationExponent: wire.rotationExponent, clockValue: clockValue)
    do { return try parameters.register(eid: id.bytes, at: now) } catch {
      throw APIFailure.badRequest(error.description)
    }
  }

  /// The identity key of an EID registration: given, or derived by key exchange.
  static func identityKey(
    _ wire: Components.Schemas.EIDRegistration, servicePrivateKey: [UInt8]?
  ) throws -> [UInt8] {
    switch (wire.identityKey, wire.beaconEcdhPublicKey) {
    case (let hex?, nil):
      guard let key = Hex.decode(hex), key.count == 16 else {
        throw APIFailure.badRequest("eid.identityKey must be 32 hex digits (16 bytes)")
      }
      return key
    case (nil, let beaconText?):
      guard let servicePrivateKey else {
        throw APIFailure.unavailable("the EID service key is not loaded; try again")
      }
      let beacon: [UInt8]
      let service: [UInt8]
      do {
        beacon = try StrictBase64.decode(beaconText, field: "eid.beaconEcdhPublicKey")
        service = try StrictBase64.decode(
          wire.serviceEcdhPublicKey ?? "", field: "eid.serviceEcdhPublicKey")
      } catch {
        throw APIFailure.badRequest(error.description)
      }
      do {
        guard service == (try EIDKeyExchange.publicKey(of: servicePrivateKey)) else {
          throw APIFailure.badRequest(
            "eid.serviceEcdhPublicKey is not this server's key: take it from GET /v1/eidparams")
        }
        guard beacon.count == EIDKeyExchange.publicKeyBytes else {
          throw APIFailure.badRequest(
            "eid.beaconEcdhPublicKey must be \(EIDKeyExchange.publicKeyBytes) bytes, got "
              + "\(beacon.count)")
        }
        return try EIDKeyExchange.identityKey(
          servicePrivateKey: servicePrivateKey, beaconPublicKey: beacon)
      } catch let error as EIDKeyExchangeError {
        throw APIFailure.badRequest("eid.beaconEcdhPublicKey: \(error.description)")
      }
    default:
      throw APIFailure.badRequest(
        "eid needs identityKey, or beaconEcdhPublicKey with serviceEcdhPublicKey (not both)")
    }
  }

  static func advertisedID(_ wire: Components.Schemas.AdvertisedID, field: String) throws
    -> BeaconID
  {
    // One parser for an advertised id, the wire's (ResolverWire), with its one error.
    do { return try wire.beaconID(field: field) } catch {
      throw APIFailure.badRequest(error.description)
    }
  }

  static func newAttachment(_ wire: Components.Schemas.AttachmentInput, field: String) throws
    -> NewAttachment
  {
    let data: [UInt8]
    let dataField = field.isEmpty ? "data" : "\(field).data"
    do { data = try StrictBase64.decode(wire.data, field: dataField) } catch {
      throw APIFailure.badRequest(error.description)
    }
    do {
      return try NewAttachment(
        namespacedType: wire.namespacedType, data: data, maxDistanceMeters: wire.maxDistanceMeters)
    } catch {
      throw failure(for: error.prefixed(field))
    }
  }

  static func wire(_ attachment: AttachmentRecord, shared: Bool = false)
    -> Components.Schemas.Attachment
  {
    .init(
      attachmentName: attachment.name, namespacedType: attachment.namespacedType,
      data: StrictBase64.encode(attachment.data),
      maxDistanceMeters: attachment.maxDistanceMeters, shared: shared ? true : nil)
  }

  /// The beacon as answered: never its identity key.
  static func wire(_ record: BeaconRecord) -> Components.Schemas.Beacon {
    let metadata = record.metadata
    let latLng = metadata.latitude.flatMap { latitude in
      metadata.longitude.map { Components.Schemas.LatLng(latitude: latitude, longitude: $0) }
    }
    return .init(
      beaconName: record.name, advertisedId: Components.Schemas.AdvertisedID(record.advertisedID),
      description: record.description.isEmpty ? nil : record.description,
      attachments: record.attachments.map { wire($0) },
      eid: record.eid.map { .init(rotationExponent: $0.generator.rotationExponent) },
      status: Components.Schemas.BeaconStatus(rawValue: record.status.rawValue),
      properties: metadata.properties.isEmpty
        ? nil : .init(additionalProperties: metadata.properties),
      place: metadata.place.isEmpty ? nil : metadata.place, latLng: latLng,
      indoorLevel: metadata.indoorLevel.isEmpty ? nil : metadata.indoorLevel,
      expectedStability: metadata.expectedStability.flatMap {
        Components.Schemas.ExpectedStability(rawValue: $0.rawValue)
      })
  }
}
