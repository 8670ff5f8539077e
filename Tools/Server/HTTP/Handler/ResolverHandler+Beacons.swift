import Foundation
import OpenAPIRuntime
import ResolverAPI
import ServerStorage

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
    let record = try await transaction { store in
      try store.registerBeacon(
        project: project, advertisedID: advertisedID, description: description,
        attachments: attachments, now: now)
    }
    guard let record else {
      throw APIFailure(
        .conflict, "conflict", "beacon \(advertisedID.name) is registered already")
    }
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
    let ids = try body.observations.map { try Self.advertisedID($0.advertisedId) }
    let records = try await read { store in
      try store.beacons(project: project, advertisedIDs: ids)
    }
    let answer = records.map { record in
      var record = record
      record.attachments = record.attachments.filter { attachment in
        filters.contains { Self.matches(attachment, filter: $0) }
      }
      return Self.wire(record)
    }
    return .ok(.init(body: .json(.init(beacons: answer))))
  }

  // MARK: Conversions

  /// `*` matches everything, `ns/*` every type of a namespace, `ns/type` one type.
  static func matches(_ attachment: AttachmentRecord, filter: String) -> Bool {
    if filter == "*" { return true }
    if filter.hasSuffix("/*") { return attachment.namespace == String(filter.dropLast(2)) }
    return attachment.namespacedType == filter
  }

  static func advertisedID(_ wire: Components.Schemas.AdvertisedID) throws -> AdvertisedID {
    let kind: AdvertisedID.Kind =
      switch wire._type {
      case .eddystone: .eddystone
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

  static func wire(_ record: BeaconRecord) -> Components.Schemas.Beacon {
    let type: Components.Schemas.AdvertisedID._TypePayload =
      switch record.advertisedID.kind {
      case .eddystone: .eddystone
      case .ibeacon: .ibeacon
      case .altbeacon: .altbeacon
      }
    return .init(
      beaconName: record.name, advertisedId: .init(_type: type, id: record.advertisedID.hex),
      description: record.description.isEmpty ? nil : record.description,
      attachments: record.attachments.map(wire))
  }
}
