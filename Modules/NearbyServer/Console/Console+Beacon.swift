import Foundation
import HTTPTypes
import Hummingbird
import ResolverAPI
import ServerStorage

/// One beacon's page: what it is, its metadata, diagnostics and alerts, and its attachments,
/// added and deleted through the API's `addAttachment` and `deleteAttachment`.
extension Console {
  func registerBeacon(on router: Router<AddressedRequestContext>) {
    router.get("console/beacon") { request, context in
      await signedIn(request, context) { session in
        let query = Self.query(of: request)
        let notice: String? =
          switch query.text("done") {
          case "added": "Attachment added."
          case "deleted": "Attachment deleted."
          default: nil
          }
        return try await beacon(
          query.text("name"), session: session, notice: notice, values: [:], errors: [:],
          status: .ok)
      }
    }
    router.post("console/beacon/attachments") { request, context in
      await signedInForm(request, context) { session, form in
        try await addAttachment(form, session: session)
      }
    }
    router.post("console/beacon/attachments/delete") { request, context in
      await signedInForm(request, context) { session, form in
        let (beacon, attachment) = (form.text("beacon"), form.text("attachment"))
        try await asAPI(session) {
          _ = try await handler.deleteAttachment(
            .init(path: .init(name: beacon, attachment: attachment))
          ).noContent
        }
        return Self.redirect(to: "/console/beacon?name=\(Self.queryValue(beacon))&done=deleted")
      }
    }
  }

  func beacon(
    _ name: String, session: ConsoleSession, notice: String?, values: [String: Any],
    errors: [String: String], status: HTTPResponse.Status
  ) async throws -> Response {
    let name = try ResolverHandler.pathName(name, field: "name")
    let (project, now, settings) = (session.project, now, configuration.diagnostics)
    let (record, diagnostics) = try await handler.read { store in
      (
        try store.beacons.beacon(project: project, name: name),
        try store.observations.diagnostics(
          project: project, beacon: name, now: now, settings: settings)
      )
    }
    guard let record else {
      throw APIFailure.notFound("There is no beacon \(name) in this project.")
    }
    var page: [String: Any] = [
      "name": record.name, "kind": record.advertisedID.kind.rawValue,
      "advertisedID": record.advertisedID.hex, "description": record.description,
      "status": record.status.rawValue, "values": values, "errors": errors,
      "metadata": Self.metadataRows(record),
    ]
    if let notice { page["notice"] = notice }
    page["attachments"] = record.attachments.map { attachment -> [String: Any] in
      [
        "name": attachment.name, "beacon": record.name,
        "namespacedType": attachment.namespacedType,
        "data": Data(attachment.data).base64EncodedString(),
        "distance": attachment.maxDistanceMeters.map { "\($0) m" } ?? "any distance",
      ]
    }
    page["hasAttachments"] = !record.attachments.isEmpty
    if let diagnostics { page["diagnostics"] = Self.diagnosticsRows(diagnostics) }
    return self.page(
      .beacon, title: "Beacon \(record.name)", values: page, session: session, status: status)
  }

  func addAttachment(_ form: ConsoleForm, session: ConsoleSession) async throws -> Response {
    let beacon = form.text("beacon")
    let isBase64 = form["base64"] == "on"
    var values: [String: Any] = [
      "namespacedType": form.text("namespacedType"), "data": form["data"] ?? "",
      "maxDistance": form.text("maxDistance"),
    ]
    if isBase64 { values["base64"] = true }
    func refused(_ field: String, _ text: String, _ status: HTTPResponse.Status) async throws
      -> Response
    {
      try await self.beacon(
        beacon, session: session, notice: nil, values: values, errors: [field: text],
        status: status)
    }
    var distance: Double?
    if !form.text("maxDistance").isEmpty {
      guard let value = Double(form.text("maxDistance")), value.isFinite else {
        return try await refused(
          "maxDistance", "Give the distance in metres, such as 2.5.", .badRequest)
      }
      distance = value
    }
    let raw = form["data"] ?? ""
    // The text's bytes are what the API's 1024-byte limit counts.
    let data =
      isBase64
      ? raw.trimmingCharacters(in: .whitespacesAndNewlines) : Data(raw.utf8).base64EncodedString()
    let input = Components.Schemas.AttachmentInput(
      namespacedType: form.text("namespacedType"), data: data, maxDistanceMeters: distance)
    do {
      try await asAPI(session) {
        _ = try await handler.addAttachment(.init(path: .init(name: beacon), body: .json(input)))
          .created
      }
    } catch let failure as APIFailure where failure.status.code < 500 && failure.status != .notFound
    {
      let field = Self.field(
        of: failure,
        among: [
          ("data", "data"), ("attachment data", "data"), ("namespacedType", "namespacedType"),
          ("namespace", "namespacedType"), ("type", "namespacedType"),
          ("maxDistance", "maxDistance"),
        ])
      return try await refused(field, failure.message, failure.status)
    }
    return Self.redirect(to: "/console/beacon?name=\(Self.queryValue(beacon))&done=added")
  }

  static func metadataRows(_ record: BeaconRecord) -> [[String: String]] {
    let metadata = record.metadata
    var rows: [[String: String]] = [
      ["label": "Registered", "value": time(record.createdAt)]
    ]
    if !metadata.place.isEmpty { rows.append(["label": "Place", "value": metadata.place]) }
    if let latitude = metadata.latitude, let longitude = metadata.longitude {
      rows.append(["label": "Position", "value": "\(latitude), \(longitude)"])
    }
    if !metadata.indoorLevel.isEmpty {
      rows.append(["label": "Indoor level", "value": metadata.indoorLevel])
    }
    if let stability = metadata.expectedStability {
      rows.append(["label": "Expected stability", "value": stability.rawValue])
    }
    if let eid = record.eid {
      rows.append(["label": "EID rotation", "value": "every 2^\(eid.generator.rotationExponent) s"])
    }
    for (key, value) in metadata.properties.sorted(by: { $0.key < $1.key }) {
      rows.append(["label": "Property \(key)", "value": value])
    }
    return rows
  }

  static func diagnosticsRows(_ diagnostics: BeaconDiagnostics) -> [String: Any] {
    var rows: [[String: String]] = [
      ["label": "Last observed", "value": diagnostics.lastObservedAt.map(time) ?? "never"]
    ]
    if let battery = diagnostics.batteryMillivolts {
      rows.append(["label": "Battery", "value": "\(battery) mV"])
    }
    if let trend = diagnostics.batteryTrendMillivoltsPerDay {
      rows.append(["label": "Battery trend", "value": String(format: "%.1f mV a day", trend)])
    }
    if let low = diagnostics.estimatedLowBatteryAt {
      rows.append(["label": "Battery low by", "value": time(low)])
    }
    if let temperature = diagnostics.temperatureCelsius {
      rows.append(["label": "Temperature", "value": String(format: "%.1f °C", temperature)])
    }
    if let telemetry = diagnostics.telemetryAt {
      rows.append(["label": "Telemetry", "value": time(telemetry)])
    }
    let alerts = diagnostics.alerts.map(\.rawValue).joined(separator: ", ")
    return ["rows": rows, "alerts": alerts.isEmpty ? "none" : alerts]
  }
}
