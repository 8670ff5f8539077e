import Foundation
import OpenAPIRuntime
import Resolution
import ResolverAPI
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
    let advertisedID = try Self.advertisedID(body.advertisedId)
    let description = body.description ?? ""
    guard description.count <= 256 else {
      throw APIFailure.limitExceeded(
        "the description is \(description.count) characters; the limit is 256 characters")
    }
    let attachments = try (body.attachments ?? []).map(Self.newAttachment)
    let now = now()
    let eid = try Self.eidRegistration(body.eid, for: advertisedID, now: now)
    let record = try await transaction { store in
      try store.registerBeacon(
        project: project, advertisedID: advertisedID, description: description, eid: eid,
        attachments: attachments, now: now)
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
    let name = input.path.name
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
    let attachment = try Self.newAttachment(body)
    let beacon = input.path.name
    let now = now()
    let added = try await transaction { store in
      try store.addAttachment(project: project, beacon: beacon, attachment, now: now)
    }
    guard let added else { throw APIFailure.notFound("no beacon \(beacon) in this project") }
    return .created(.init(body: .json(Self.wire(added))))
  }

  func deleteAttachment(_ input: Operations.DeleteAttachment.Input) async throws
    -> Operations.DeleteAttachment.Output
  {
    let project = try RequestContext.required().project
    let (beacon, name) = (input.path.name, input.path.attachment)
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
    guard body.observations.count <= 1000 else {
      throw APIFailure.limitExceeded(
        "\(body.observations.count) observations; the limit is 1000 a request")
    }
    guard !body.namespacedTypes.isEmpty else {
      throw APIFailure.badRequest("namespacedTypes must name at least one type, or '*'")
    }
    let filters = body.namespacedTypes
    var observed: [AdvertisedID] = []
    var seen = Set<AdvertisedID>()
    for observation in body.observations {
      let id = try Self.advertisedID(observation.advertisedId)
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
    var matches: [(observed: AdvertisedID, registered: AdvertisedID)] = []
    for id in observed {
      guard id.kind == .eddystoneEID else {
        matches.append((id, id))
        continue
      }
      guard let name = index?.beacon(for: id.bytes, at: now) else { continue }
      let registered = try AdvertisedID(
        kind: .eddystoneEID, hex: String(name.dropFirst("eddystone-eid!".count)))
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
        NamespacedTypeFilter.matches(namespace: $0.namespace, type: $0.type, anyOf: filters)
      }
      var wire = Self.wire(record)
      wire.observedId = Self.wire(match.observed)
      return wire
    }
    return .ok(.init(body: .json(.init(beacons: answer))))
  }

  // MARK: Conversions

  /// The EID parameters of a registration, checked against the id the beacon broadcasts.
  static func eidRegistration(
    _ wire: Components.Schemas.EIDRegistration?, for id: AdvertisedID, now: Date
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
    guard wire.identityKey.count == 32, wire.identityKey.allSatisfy(\.isHexDigit),
      let key = try? BeaconBytes(hex: wire.identityKey)
    else {
      throw APIFailure.badRequest("eid.identityKey must be 32 hex digits (16 bytes)")
    }
    let clock = wire.clockValue ?? 0
    guard let clockValue = UInt32(exactly: clock) else {
      throw APIFailure.badRequest("eid.clockValue must be 0 to 4294967295, got \(clock)")
    }
    let parameters = EddystoneEIDParameters(
      identityKey: Array(key), rotationExponent: wire.rotationExponent, clockValue: clockValue)
    do { return try parameters.register(eid: id.bytes, at: now) } catch {
      throw APIFailure.badRequest(error.description)
    }
  }

  static func advertisedID(_ wire: Components.Schemas.AdvertisedID) throws -> AdvertisedID {
    let kind: AdvertisedID.Kind =
      switch wire._type {
      case .eddystone: .eddystone
      case .eddystoneEid: .eddystoneEID
      case .ibeacon: .ibeacon
      case .altbeacon: .altbeacon
      }
    do { return try AdvertisedID(kind: kind, hex: wire.id) } catch {
      throw APIFailure.badRequest(error.description)
    }
  }

  static func newAttachment(_ wire: Components.Schemas.AttachmentInput) throws -> NewAttachment {
    do {
      return try NewAttachment(namespacedType: wire.namespacedType, data: Array(wire.data.data))
    } catch {
      switch error {
      case .invalid(let why): throw APIFailure.badRequest(why)
      case .overLimit(let why): throw APIFailure.limitExceeded(why)
      }
    }
  }

  static func wire(_ attachment: AttachmentRecord) -> Components.Schemas.Attachment {
    .init(
      attachmentName: attachment.name, namespacedType: attachment.namespacedType,
      data: Base64EncodedData(attachment.data))
  }

  static func wire(_ id: AdvertisedID) -> Components.Schemas.AdvertisedID {
    let type: Components.Schemas.AdvertisedID._TypePayload =
      switch id.kind {
      case .eddystone: .eddystone
      case .eddystoneEID: .eddystoneEid
      case .ibeacon: .ibeacon
      case .altbeacon: .altbeacon
      }
    return .init(_type: type, id: id.hex)
  }

  /// The beacon as answered: never its identity key.
  static func wire(_ record: BeaconRecord) -> Components.Schemas.Beacon {
    .init(
      beaconName: record.name, advertisedId: wire(record.advertisedID),
      description: record.description.isEmpty ? nil : record.description,
      attachments: record.attachments.map(wire),
      eid: record.eid.map { .init(rotationExponent: $0.generator.rotationExponent) })
  }
}
