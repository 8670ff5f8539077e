import Core
import Foundation
import OpenAPIRuntime
import Resolution
import ResolverAPI
@_spi(Resolver) import ResolverWire
import ServerStorage
import Tokens

/// Beacons and their attachments (contract §7), each call scoped to the API key's project.
extension ResolverHandler {
  func registerBeacon(_ input: Operations.RegisterBeacon.Input) async throws
    -> Operations.RegisterBeacon.Output
  {
    let project = try RequestContext.required().project
    guard case .json(let body) = input.body else {
      throw APIFailure.badRequest("the body must be application/json")
    }
    if !(body.attachments ?? []).isEmpty { try await checkStoredBytes(project: project) }
    let advertisedID = try Self.advertisedID(body.advertisedId, field: "advertisedId")
    let description = body.description ?? ""
    try Self.check(description, field: "description", maximumBytes: Self.maximumDescriptionBytes)
    let wireAttachments = body.attachments ?? []
    guard wireAttachments.count <= Self.maximumAttachmentsPerRegistration else {
      throw APIFailure.limitExceeded(
        "attachments: \(wireAttachments.count) items; the limit is "
          + "\(Self.maximumAttachmentsPerRegistration) a registration")
    }
    let attachments = try wireAttachments.enumerated().map { index, attachment in
      try Self.newAttachment(attachment, field: "attachments[\(index)]")
    }
    let now = now()
    let limits = configuration.beaconLimits
    let eid = try Self.eidRegistration(
      body.eid, for: advertisedID, now: now,
      minimumRotationExponent: limits.minimumEIDRotationExponent)
    let record = try await transaction { store in
      try store.registerBeacon(
        project: project, advertisedID: advertisedID, description: description, eid: eid,
        attachments: attachments, now: now, limits: limits)
    }
    guard let record else {
      throw APIFailure(
        .conflict, "conflict", "beacon \(advertisedID.name) is registered already")
    }
    if eid != nil { await eidIndexes.invalidate(project: project) }
    return .created(.init(body: .json(Self.wire(record))))
  }

  func listBeacons(_ input: Operations.ListBeacons.Input) async throws
    -> Operations.ListBeacons.Output
  {
    let project = try RequestContext.required().project
    let records = try await read { store in try store.beacons(project: project) }
    return .ok(.init(body: .json(.init(beacons: records.map(Self.wire)))))
  }

  func deleteBeacon(_ input: Operations.DeleteBeacon.Input) async throws
    -> Operations.DeleteBeacon.Output
  {
    let project = try RequestContext.required().project
    let name = try Self.pathName(input.path.name, field: "name")
    let deleted = try await transaction { store in
      try store.deleteBeacon(project: project, name: name)
    }
    guard deleted else { throw APIFailure.notFound("no beacon \(name) in this project") }
    await eidIndexes.invalidate(project: project)
    return .noContent(.init())
  }

  func addAttachment(_ input: Operations.AddAttachment.Input) async throws
    -> Operations.AddAttachment.Output
  {
    let project = try RequestContext.required().project
    guard case .json(let body) = input.body else {
      throw APIFailure.badRequest("the body must be application/json")
    }
    let attachment = try Self.newAttachment(body, field: "")
    let beacon = try Self.pathName(input.path.name, field: "name")
    try await checkStoredBytes(project: project)
    let (now, limits) = (now(), configuration.beaconLimits)
    let added = try await transaction { store in
      try store.addAttachment(
        project: project, beacon: beacon, attachment, now: now, limits: limits)
    }
    guard let added else { throw APIFailure.notFound("no beacon \(beacon) in this project") }
    return .created(.init(body: .json(Self.wire(added))))
  }

  func deleteAttachment(_ input: Operations.DeleteAttachment.Input) async throws
    -> Operations.DeleteAttachment.Output
  {
    let project = try RequestContext.required().project
    let beacon = try Self.pathName(input.path.name, field: "name")
    let name = try Self.pathName(input.path.attachment, field: "attachment")
    let deleted = try await transaction { store in
      try store.deleteAttachment(project: project, beacon: beacon, name: name)
    }
    guard deleted else {
      throw APIFailure.notFound("no attachment \(name) on beacon \(beacon) in this project")
    }
    return .noContent(.init())
  }

  func getForObserved(_ input: Operations.GetForObserved.Input) async throws
    -> Operations.GetForObserved.Output
  {
    let project = try RequestContext.required().project
    guard case .json(let body) = input.body else {
      throw APIFailure.badRequest("the body must be application/json")
    }
    guard body.observations.count <= Self.maximumObservations else {
      throw APIFailure.limitExceeded(
        "observations: \(body.observations.count) items; the limit is "
          + "\(Self.maximumObservations) a request")
    }
    guard !body.namespacedTypes.isEmpty else {
      throw APIFailure.badRequest("namespacedTypes must name at least one type, or '*'")
    }
    guard body.namespacedTypes.count <= Self.maximumNamespacedTypes else {
      throw APIFailure.limitExceeded(
        "namespacedTypes: \(body.namespacedTypes.count) items; the limit is "
          + "\(Self.maximumNamespacedTypes) a request")
    }
    for (index, filter) in body.namespacedTypes.enumerated() {
      try Self.check(
        filter, field: "namespacedTypes[\(index)]", maximumBytes: Self.maximumNamespacedTypeBytes)
    }
    let filters = NamespacedTypeFilter(body.namespacedTypes)
    var observed: [BeaconID] = []
    var seen = Set<BeaconID>()
    for (index, observation) in body.observations.enumerated() {
      let field = "observations[\(index)]"
      if let timestamp = observation.timestampMs {
        try Self.checkTimestamp(timestamp, field: "\(field).timestampMs")
      }
      let id = try Self.advertisedID(observation.advertisedId, field: "\(field).advertisedId")
      if seen.insert(id).inserted { observed.append(id) }
    }
    // Each observed id, in the request's order, and the registered id it stands for: itself,
    // or the EID beacon broadcasting it now.
    var index: EddystoneEIDIndex<String>?
    let now = now()
    if observed.contains(where: { $0.kind == .eddystoneEID }) {
      let storage = storage
      index = try await eidIndexes.index(project: project, now: now) {
        try await storage.read { store in try store.eidBeacons(project: project) }
      }
    }
    var matches: [(observed: BeaconID, registered: BeaconID)] = []
    for id in observed {
      guard id.kind == .eddystoneEID else {
        matches.append((id, id))
        continue
      }
      // The index names beacons the store wrote; one that does not parse is skipped.
      guard let name = index?.beacon(for: id.bytes, at: now),
        let registered = try? BeaconID(name: name)
      else { continue }
      matches.append((id, registered))
    }
    let registered = matches.map(\.registered)
    let records = try await read { store in
      try store.beacons(project: project, advertisedIDs: registered)
    }
    let byID = Dictionary(records.map { ($0.advertisedID, $0) }, uniquingKeysWith: { a, _ in a })
    let answer = matches.compactMap { match -> Components.Schemas.Beacon? in
      guard var record = byID[match.registered] else { return nil }
      record.attachments = record.attachments.filter {
        filters.matches(namespace: $0.namespace, type: $0.type)
      }
      var wire = Self.wire(record)
      wire.observedId = Components.Schemas.AdvertisedID(match.observed)
      return wire
    }
    return .ok(.init(body: .json(.init(beacons: answer))))
  }

  // MARK: Limits

  /// The longest beacon description, in UTF-8 bytes.
  static let maximumDescriptionBytes = 256
  /// The most attachments one registration carries.
  static let maximumAttachmentsPerRegistration = 100
  /// The most observations and namespaced-type filters of one `getforobserved`.
  static let maximumObservations = 1000
  static let maximumNamespacedTypes = 100
  /// The longest filter: a namespace (64), `/` and a type (32).
  static let maximumNamespacedTypeBytes = 97
  /// The longest name in a path (beacon or attachment).
  static let maximumPathNameBytes = BeaconID.maximumNameBytes

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
    }
  }

  // MARK: Conversions

  /// The EID parameters of a registration, checked against the id the beacon broadcasts.
  static func eidRegistration(
    _ wire: Components.Schemas.EIDRegistration?, for id: BeaconID, now: Date,
    minimumRotationExponent: Int
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
    guard let key = Hex.decode(wire.identityKey), key.count == 16 else {
      throw APIFailure.badRequest("eid.identityKey must be 32 hex digits (16 bytes)")
    }
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

  static func advertisedID(_ wire: Components.Schemas.AdvertisedID, field: String) throws
    -> BeaconID
  {
    do { return try BeaconID(kind: BeaconID.Kind(wire._type), hex: wire.id) } catch {
      throw APIFailure.badRequest("\(field).id: \(error.description)")
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
    do { return try NewAttachment(namespacedType: wire.namespacedType, data: data) } catch {
      throw failure(for: error.prefixed(field))
    }
  }

  static func wire(_ attachment: AttachmentRecord) -> Components.Schemas.Attachment {
    .init(
      attachmentName: attachment.name, namespacedType: attachment.namespacedType,
      data: StrictBase64.encode(attachment.data))
  }

  /// The beacon as answered: never its identity key.
  static func wire(_ record: BeaconRecord) -> Components.Schemas.Beacon {
    .init(
      beaconName: record.name, advertisedId: Components.Schemas.AdvertisedID(record.advertisedID),
      description: record.description.isEmpty ? nil : record.description,
      attachments: record.attachments.map(wire),
      eid: record.eid.map { .init(rotationExponent: $0.generator.rotationExponent) })
  }
}
