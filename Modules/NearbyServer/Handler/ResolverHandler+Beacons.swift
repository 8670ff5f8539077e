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
    let status: BeaconStatus = body.status == .inactive ? .inactive : .active
    let metadata = try Self.metadata(
      BeaconMetadata(), properties: body.properties, place: body.place, latLng: body.latLng,
      indoorLevel: body.indoorLevel, expectedStability: body.expectedStability)
    // The key exchange method needs the server's private key.
    let serviceKey =
      body.eid?.beaconEcdhPublicKey == nil
      ? nil
      : try await transaction { store in
        try store.beacons.eidServiceKey(project: project, now: now).privateKey
      }
    let eid = try Self.eidRegistration(
      body.eid, for: advertisedID, now: now,
      minimumRotationExponent: limits.minimumEIDRotationExponent, servicePrivateKey: serviceKey)
    let record = try await transaction { store in
      try store.beacons.registerBeacon(
        project: project, advertisedID: advertisedID, description: description, eid: eid,
        attachments: attachments, now: now, limits: limits, status: status, metadata: metadata)
    }
    guard let record else {
      throw APIFailure(
        .conflict, "conflict", "beacon \(advertisedID.name) is registered already")
    }
    if let eid = record.eid {
      await eidIndexes.update(
        project: project, beacon: record.name, registration: record.status == .active ? eid : nil)
    }
    return .created(.init(body: .json(Self.wire(record))))
  }

  func deleteBeacon(_ input: Operations.DeleteBeacon.Input) async throws
    -> Operations.DeleteBeacon.Output
  {
    let project = try RequestContext.required().project
    let name = try Self.pathName(input.path.name, field: "name")
    let deleted = try await transaction { store in
      try store.beacons.deleteBeacon(project: project, name: name)
    }
    guard deleted else { throw APIFailure.notFound("no beacon \(name) in this project") }
    await eidIndexes.update(project: project, beacon: name, registration: nil)
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
      try store.beacons.addAttachment(
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
      try store.beacons.deleteAttachment(project: project, beacon: beacon, name: name)
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
    var telemetry: [BeaconID: BeaconTelemetryReading] = [:]
    for (index, observation) in body.observations.enumerated() {
      let field = "observations[\(index)]"
      if let timestamp = observation.timestampMs {
        try Self.checkTimestamp(timestamp, field: "\(field).timestampMs")
      }
      let id = try Self.advertisedID(observation.advertisedId, field: "\(field).advertisedId")
      if seen.insert(id).inserted { observed.append(id) }
      if let text = observation.telemetry {
        telemetry[id] = try Self.telemetry(text, field: "\(field).telemetry")
      }
    }
    let now = now()
    let own = try await beaconsObserved(observed, project: project, now: now, learn: true)
    // Diagnostics: only the project's own beacons (another project's clients cannot write
    // into its beacons' health).
    await recordObservations(project: project, observed: own, telemetry: telemetry, now: now)
    // Public namespaces of other projects that a filter names, by owner.
    let named = filters.namedNamespaces
    let foreign =
      named.isEmpty
      ? []
      : try await read { store in
        try store.namespaces.publicNamespaces(named: named, readBy: project)
      }
    guard foreign.count <= Self.maximumForeignNamespaces else {
      throw APIFailure.limitExceeded(
        "namespacedTypes name \(foreign.count) public namespaces of other projects; the limit "
          + "is \(Self.maximumForeignNamespaces) a request")
    }
    var others: [BeaconVisibility.Foreign] = []
    for (owner, namespaces) in Dictionary(grouping: foreign, by: \.project).sorted(by: {
      $0.key < $1.key
    }) {
      others.append(
        BeaconVisibility.Foreign(
          namespaces: Set(namespaces.map(\.name)),
          beacons: try await beaconsObserved(observed, project: owner, now: now)))
    }
    let answer = BeaconVisibility.visible(
      observed: observed, own: own, foreign: others, filters: filters
    ).map { visible in
      var wire = Self.wire(visible.beacon)
      wire.status = nil
      wire.attachments += visible.sharedAttachments.map { Self.wire($0, shared: true) }
      wire.observedId = Components.Schemas.AdvertisedID(visible.observedID)
      return wire
    }
    return .ok(.init(body: .json(.init(beacons: answer))))
  }

  /// The beacons of `project` that the observed ids stand for, by observed id: the beacon
  /// registered with that id, or the EID beacon broadcasting it now. `learn`: an EID match
  /// teaches the beacon's clock (``learnEIDClocks(_:project:now:)``); only the project's own
  /// clients teach it.
  func beaconsObserved(
    _ observed: [BeaconID], project: String, now: Date, learn: Bool = false
  ) async throws -> [BeaconID: BeaconRecord] {
    var index: EddystoneEIDIndex<String>?
    if observed.contains(where: { $0.kind == .eddystoneEID }) {
      let storage = storage
      index = try await eidIndexes.index(project: project, now: now) {
        try await storage.read { store in try store.beacons.eidBeacons(project: project) }
      }
    }
    var matches: [(observed: BeaconID, registered: BeaconID)] = []
    var eidMatches: [(beacon: String, periodStart: Int64, registration: EddystoneEIDRegistration)] =
      []
    for id in observed {
      guard id.kind == .eddystoneEID else {
        matches.append((id, id))
        continue
      }
      // The index names beacons the store wrote; one that does not parse is skipped.
      guard let match = index?.match(for: id.bytes, at: now),
        let registered = try? BeaconID(name: match.beacon)
      else { continue }
      matches.append((id, registered))
      if learn { eidMatches.append(match) }
    }
    if !eidMatches.isEmpty { await learnEIDClocks(eidMatches, project: project, now: now) }
    let registered = matches.map(\.registered)
    let records = try await read { store in
      try store.beacons.beacons(project: project, advertisedIDs: registered, servedOnly: true)
    }
    let byID = Dictionary(records.map { ($0.advertisedID, $0) }, uniquingKeysWith: { a, _ in a })
    var found: [BeaconID: BeaconRecord] = [:]
    for match in matches {
      if let record = byID[match.registered] { found[match.observed] = record }
    }
    return found
  }

  /// Stores what EID matches teach: a beacon's clock offset when the match moved it, and its
  /// last match when the stored one is older than ``eidMatchRecordInterval`` (the search
  /// window widens with the time since). Each beacon written is updated in the project's
  /// index. A
  /// failure is logged: the attachments are what the client asked for.
  func learnEIDClocks(
    _ matches: [(beacon: String, periodStart: Int64, registration: EddystoneEIDRegistration)],
    project: String, now: Date
  ) async {
    var learned: [String: (beacon: String, clockOffset: Int64, matchedAt: Date)] = [:]
    var registrations: [String: EddystoneEIDRegistration] = [:]
    for match in matches {
      let next = match.registration.matched(periodStart: match.periodStart, at: now)
      let stale = match.registration.lastMatchedAt.map {
        now.timeIntervalSince($0) >= Self.eidMatchRecordInterval
      }
      guard next.clockOffset != match.registration.clockOffset || stale ?? true else { continue }
      if next.clockOffset != match.registration.clockOffset {
        logger.info(
          "EID beacon clock learned",
          metadata: [
            "beacon": "\(match.beacon)",
            "offset": "\(next.clockOffset - match.registration.clockOffset) s",
          ])
      }
      learned[match.beacon] = (match.beacon, next.clockOffset, now)
      registrations[match.beacon] = next
    }
    guard !learned.isEmpty else { return }
    let rows = learned.values.sorted { $0.beacon < $1.beacon }
    do {
      try await storage.transaction { store in
        try store.beacons.recordEIDMatches(project: project, rows)
      }
      for (beacon, registration) in registrations {
        await eidIndexes.update(project: project, beacon: beacon, registration: registration)
      }
    } catch {
      logger.warning(
        "EID matches not recorded",
        metadata: ["beacons": "\(rows.count)", "error": "\(String(reflecting: error))"])
    }
  }

  /// How often a still-matched EID beacon's last match is written (seconds).
  static let eidMatchRecordInterval: TimeInterval = 600

  // MARK: Limits

  /// The longest beacon description, in UTF-8 bytes.
  static let maximumDescriptionBytes = ResolverContract.maximumDescriptionBytes
  /// The most attachments one registration carries.
  static let maximumAttachmentsPerRegistration = ResolverContract.maximumAttachmentsPerRegistration
  /// The most observations and namespaced-type filters of one `getforobserved`.
  static let maximumObservations = ResolverContract.maximumObservations
  static let maximumNamespacedTypes = ResolverContract.maximumNamespacedTypes
  /// The most public namespaces of other projects one `getforobserved` reads.
  static let maximumForeignNamespaces = 16
  /// The longest filter: a namespace (64), `/` and a type (32).
  static let maximumNamespacedTypeBytes = ResolverContract.maximumNamespacedTypeBytes
  /// The longest name in a path (beacon or attachment).
  static let maximumPathNameBytes = BeaconID.maximumNameBytes
}
