import Foundation
import OpenAPIRuntime
import Resolution
import ResolverAPI
@_spi(Resolver) import ResolverWire
import ServerStorage

/// The beacon lifecycle and metadata: updating a beacon, and listing beacons in
/// pages with filters.
extension ResolverHandler {
  func updateBeacon(_ input: Operations.UpdateBeacon.Input) async throws
    -> Operations.UpdateBeacon.Output
  {
    let project = try RequestContext.required().project
    guard case .json(let body) = input.body else {
      throw APIFailure.badRequest("the body must be application/json")
    }
    let name = try Self.pathName(input.path.name, field: "name")
    if let description = body.description {
      try Self.check(description, field: "description", maximumBytes: Self.maximumDescriptionBytes)
    }
    let status = body.status.flatMap { BeaconStatus(rawValue: $0.rawValue) }
    let patch = body
    let updated = try await transaction { store -> BeaconRecord? in
      guard let current = try store.beacons.beacon(project: project, name: name) else { return nil }
      let metadata = try Self.metadata(
        current.metadata, properties: patch.properties, place: patch.place,
        latLng: patch.latLng, indoorLevel: patch.indoorLevel,
        expectedStability: patch.expectedStability)
      return try store.beacons.updateBeacon(
        project: project, name: name, description: patch.description ?? current.description,
        status: status ?? current.status, metadata: metadata)
    }
    guard let updated else { throw APIFailure.notFound("no beacon \(name) in this project") }
    if let eid = updated.eid {
      // The index holds served beacons only; this one beacon changes in it.
      await eidIndexes.update(
        project: project, beacon: updated.name, registration: updated.status == .active ? eid : nil)
    }
    return .ok(.init(body: .json(Self.wire(updated))))
  }

  func listBeacons(_ input: Operations.ListBeacons.Input) async throws
    -> Operations.ListBeacons.Output
  {
    let project = try RequestContext.required().project
    let query = input.query
    var filter = BeaconListFilter()
    filter.status = query.status.flatMap { BeaconStatus(rawValue: $0.rawValue) }
    if let property = query.property {
      guard let equals = property.firstIndex(of: "="), equals != property.startIndex else {
        throw APIFailure.badRequest(
          "property must be key=value, got '\(TextRules.printable(property))'")
      }
      let key = String(property[..<equals])
      let value = String(property[property.index(after: equals)...])
      // A filter is not stored: over a limit, it is malformed (400), not unprocessable.
      do {
        try TextRules.check(
          key, field: "property's key",
          maximumBytes: BeaconMetadata.Limits.maximumPropertyKeyBytes)
        try TextRules.check(
          value, field: "property's value",
          maximumBytes: BeaconMetadata.Limits.maximumPropertyValueBytes)
      } catch {
        throw APIFailure.badRequest(error.description)
      }
      filter.property = (key, value)
    }
    if let type = query.attachmentType {
      filter.attachment = try Self.namespacedTypeQuery(type, field: "attachmentType")
    }
    if let text = query.registeredAfter {
      guard let date = Self.rfc3339(text) else {
        throw APIFailure.badRequest(
          "registeredAfter must be an RFC 3339 time such as 2026-01-31T12:00:00Z, got "
            + "'\(TextRules.printable(text))'")
      }
      filter.registeredAfter = date
    }
    let size = query.pageSize ?? Self.maximumBeaconPage
    guard (1...Self.maximumBeaconPage).contains(size) else {
      throw APIFailure.badRequest("pageSize must be 1 to \(Self.maximumBeaconPage), got \(size)")
    }
    let cursor = try query.pageToken.map(Self.cursor)
    let wanted = filter
    let (records, next) = try await read { store in
      try store.beacons.listBeacons(project: project, filter: wanted, after: cursor, limit: size)
    }
    return .ok(
      .init(
        body: .json(.init(beacons: records.map(Self.wire), nextPageToken: next.map(Self.token)))))
  }

  func listAttachments(_ input: Operations.ListAttachments.Input) async throws
    -> Operations.ListAttachments.Output
  {
    let project = try RequestContext.required().project
    let beacon = try Self.pathName(input.path.name, field: "name")
    let type = try input.query.namespacedType.map {
      try Self.namespacedTypeQuery($0, field: "namespacedType")
    }
    let found = try await read { store in
      try store.beacons.attachments(
        project: project, beacon: beacon, namespace: type?.namespace, type: type?.type)
    }
    guard let found else { throw APIFailure.notFound("no beacon \(beacon) in this project") }
    return .ok(.init(body: .json(.init(attachments: found.map { Self.wire($0) }))))
  }

  func batchDeleteAttachments(_ input: Operations.BatchDeleteAttachments.Input) async throws
    -> Operations.BatchDeleteAttachments.Output
  {
    let project = try RequestContext.required().project
    let beacon = try Self.pathName(input.path.name, field: "name")
    let type = try input.query.namespacedType.map {
      try Self.namespacedTypeQuery($0, field: "namespacedType")
    }
    let deleted = try await transaction { store in
      try store.beacons.deleteAttachments(
        project: project, beacon: beacon, namespace: type?.namespace, type: type?.type)
    }
    guard let deleted else { throw APIFailure.notFound("no beacon \(beacon) in this project") }
    return .ok(.init(body: .json(.init(deletedCount: deleted))))
  }

  /// `ns/type`, or `ns/*` (every type: `type` nil), from a query parameter.
  /// - Throws: 400 naming `field`.
  static func namespacedTypeQuery(_ text: String, field: String) throws
    -> (namespace: String, type: String?)
  {
    let every = text.hasSuffix("/*")
    let parsed: NewAttachment
    do {
      parsed = try NewAttachment(
        namespacedType: every ? String(text.dropLast(2)) + "/t" : text, data: [])
    } catch {
      throw APIFailure.badRequest("\(field): \(error.description); or ns/*")
    }
    return (parsed.namespace, every ? nil : parsed.type)
  }

  /// The most beacons in a listing page.
  static let maximumBeaconPage = ResolverContract.maximumPageSize

  /// Applies what a registration or update gives to `metadata`, checked.
  /// - Throws: 400 or 422 naming the field.
  static func metadata(
    _ metadata: BeaconMetadata, properties: Components.Schemas.BeaconProperties?,
    place: String?, latLng: Components.Schemas.LatLng?, indoorLevel: String?,
    expectedStability: Components.Schemas.ExpectedStability?
  ) throws -> BeaconMetadata {
    var metadata = metadata
    if let properties { metadata.properties = properties.additionalProperties }
    if let place { metadata.place = place }
    if let latLng { (metadata.latitude, metadata.longitude) = (latLng.latitude, latLng.longitude) }
    if let indoorLevel { metadata.indoorLevel = indoorLevel }
    if let expectedStability {
      metadata.expectedStability = BeaconStability(rawValue: expectedStability.rawValue)
    }
    do { try metadata.check() } catch { throw failure(for: error) }
    return metadata
  }

  /// A page token: the cursor as `seconds-bits.name`, base64url.
  static func token(_ cursor: BeaconListCursor) -> String {
    base64URL(String(cursor.createdAt.bitPattern, radix: 16) + "." + cursor.name)
  }

  /// `text` as unpadded base64url (page tokens).
  static func base64URL(_ text: String) -> String { Base64URL.encode(text.utf8) }

  /// The text of an unpadded base64url page token; nil if it is not one.
  static func text(ofBase64URL token: String) -> String? {
    Base64URL.decode(token).flatMap { String(validating: $0, as: UTF8.self) }
  }

  /// The cursor of a page token.
  /// - Throws: 400 for a token this server did not make.
  static func cursor(_ token: String) throws -> BeaconListCursor {
    guard let text = text(ofBase64URL: token), let dot = text.firstIndex(of: "."),
      let bits = UInt64(text[..<dot], radix: 16)
    else {
      throw APIFailure.badRequest("pageToken is not one this server gave; start without it")
    }
    let name = String(text[text.index(after: dot)...])
    do { try TextRules.check(name, field: "pageToken", maximumBytes: maximumPathNameBytes) } catch {
      throw APIFailure.badRequest("pageToken is not one this server gave; start without it")
    }
    return BeaconListCursor(createdAt: Double(bitPattern: bits), name: name)
  }

  /// An RFC 3339 time, with or without fractional seconds.
  static func rfc3339(_ text: String) -> Date? {
    let formatter = ISO8601DateFormatter()
    if let date = formatter.date(from: text) { return date }
    formatter.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
    return formatter.date(from: text)
  }
}

/// Eddystone-EID registration by key exchange: the parameters a beacon's configuring client
/// needs (`GET /v1/eidparams`).
extension ResolverHandler {
  func getEIDParams(_ input: Operations.GetEIDParams.Input) async throws
    -> Operations.GetEIDParams.Output
  {
    let (project, now) = (try RequestContext.required().project, now())
    // The caller's project's key: another project's registrations derive other identity keys.
    let key = try await transaction { store in
      try store.beacons.eidServiceKey(project: project, now: now).publicKey
    }
    return .ok(
      .init(
        body: .json(
          .init(
            serviceEcdhPublicKey: StrictBase64.encode(key),
            minRotationPeriodExponent: configuration.beaconLimits.minimumEIDRotationExponent,
            maxRotationPeriodExponent: EddystoneEIDGenerator.maximumRotationExponent))))
  }
}
