import Foundation
import HTTPTypes
import Hummingbird
import ResolverAPI
import ServerStorage

/// The beacon list (search and paging through the API's `listBeacons`) and the registration
/// form (the API's `registerBeacon`: the same checks and limits).
extension Console {
  /// Beacons a page.
  static let beaconPageSize = 50

  func registerBeacons(on router: Router<AddressedRequestContext>) {
    router.get("console/beacons") { request, context in
      await signedIn(request, context) { session in
        try await beacons(Self.query(of: request), session: session)
      }
    }
    router.get("console/beacons/new") { request, context in
      await signedIn(request, context) { session in
        registrationPage(
          values: ["rotationExponent": "10", "clockValue": "0"], errors: [:],
          kind: "eddystone", session: session, status: .ok)
      }
    }
    router.post("console/beacons/new") { request, context in
      await signedInForm(request, context) { session, form in
        try await register(form, session: session)
      }
    }
  }

  func beacons(_ query: ConsoleForm, session: ConsoleSession) async throws -> Response {
    let search = query.text("q")
    let status = Components.Schemas.BeaconStatus(rawValue: query.text("status"))
    var input = Operations.ListBeacons.Input.Query(
      status: status, pageSize: Self.beaconPageSize,
      pageToken: query["page"].flatMap { $0.isEmpty ? nil : $0 })
    var values: [String: Any] = ["query": search]
    if search.contains("=") {
      input.property = search
    } else if search.contains("/") {
      input.attachmentType = search
    } else if !search.isEmpty {
      values["error"] =
        "Search for a property as key=value, or an attachment type as namespace/type."
    }
    let choices =
      [("", "any")] + Components.Schemas.BeaconStatus.allCases.map { ($0.rawValue, $0.rawValue) }
    values["statuses"] = choices.map { value, label -> [String: Any] in
      ["value": value, "label": label, "selected": value == (status?.rawValue ?? "")]
    }
    guard values["error"] == nil else {
      values["count"] = 0
      values["hasBeacons"] = false
      return page(
        .beacons, title: "Beacons", values: values, session: session, status: .badRequest)
    }
    let listed: Components.Schemas.BeaconPage
    do {
      listed = try await asAPI(session) {
        try await handler.listBeacons(.init(query: input)).ok.body.json
      }
    } catch let failure as APIFailure where failure.status.code < 500 {
      values["error"] = failure.message
      values["count"] = 0
      values["hasBeacons"] = false
      return page(
        .beacons, title: "Beacons", values: values, session: session, status: failure.status)
    }
    let names = listed.beacons.map(\.beaconName)
    let (project, now, settings) = (session.project, now, configuration.diagnostics)
    // One read for the page's last-seen times (the page is bounded).
    let seen = try await handler.read { store in
      try names.reduce(into: [String: Date]()) { seen, name in
        seen[name] =
          try store.observations.diagnostics(
            project: project, beacon: name, now: now, settings: settings)?
          .lastObservedAt
      }
    }
    values["beacons"] = listed.beacons.map { beacon -> [String: Any] in
      [
        "name": beacon.beaconName, "nameQuery": Self.queryValue(beacon.beaconName),
        "description": beacon.description ?? "", "status": beacon.status?.rawValue ?? "",
        "lastSeen": seen[beacon.beaconName].map(Self.time) ?? "never",
        "attachments": beacon.attachments.count,
      ]
    }
    values["count"] = listed.beacons.count
    values["hasBeacons"] = !listed.beacons.isEmpty
    if let next = listed.nextPageToken {
      values["next"] =
        "/console/beacons?q=\(Self.queryValue(search))&status=\(status?.rawValue ?? "")"
        + "&page=\(Self.queryValue(next))"
    }
    return page(.beacons, title: "Beacons", values: values, session: session)
  }

  func registrationPage(
    values: [String: String], errors: [String: String], kind: String, session: ConsoleSession,
    status: HTTPResponse.Status
  ) -> Response {
    let kinds: [(String, String)] = [
      ("eddystone", "Eddystone-UID"), ("ibeacon", "iBeacon"), ("altbeacon", "AltBeacon"),
      ("eddystone-eid", "Eddystone-EID"),
    ]
    return page(
      .register, title: "Register a beacon",
      values: [
        "values": values, "errors": errors,
        "kinds": kinds.map { ["value": $0.0, "label": $0.1, "selected": $0.0 == kind] },
      ], session: session, status: status)
  }

  func register(_ form: ConsoleForm, session: ConsoleSession) async throws -> Response {
    let fields = ["id", "description", "identityKey", "rotationExponent", "clockValue"]
    let values = Dictionary(uniqueKeysWithValues: fields.map { ($0, form.text($0)) })
    let kindText = form.text("type")
    func refused(_ field: String, _ text: String, _ status: HTTPResponse.Status) -> Response {
      registrationPage(
        values: values, errors: [field: text], kind: kindText, session: session, status: status)
    }
    guard let kind = Components.Schemas.AdvertisedID._TypePayload(rawValue: kindText) else {
      return refused("form", "Choose the kind of beacon.", .badRequest)
    }
    var eid: Components.Schemas.EIDRegistration?
    if kind == .eddystoneEid {
      guard let exponent = Int(values["rotationExponent"] ?? ""),
        let clock = Int64(values["clockValue"] ?? "")
      else {
        return refused("eid", "The rotation exponent and the clock are whole numbers.", .badRequest)
      }
      eid = .init(identityKey: values["identityKey"], rotationExponent: exponent, clockValue: clock)
    }
    let registration = Components.Schemas.BeaconRegistration(
      advertisedId: .init(_type: kind, id: values["id"] ?? ""),
      description: form["description"] ?? "", eid: eid)
    let created: Components.Schemas.Beacon
    do {
      created = try await asAPI(session) {
        try await handler.registerBeacon(.init(body: .json(registration))).created.body.json
      }
    } catch let failure as APIFailure where failure.status.code < 500 {
      let field = Self.field(
        of: failure,
        among: [
          ("advertisedId", "id"), ("description", "description"), ("eid", "eid"),
          ("beacon", "id"),
        ])
      return refused(field, failure.message, failure.status)
    }
    return Self.redirect(to: "/console/beacon?name=\(Self.queryValue(created.beaconName))")
  }

  /// Runs an API handler as the session's key, as the API-key middleware would have.
  func asAPI<T: Sendable>(_ session: ConsoleSession, _ work: () async throws -> T) async throws -> T
  {
    try await RequestContext.$current.withValue(
      RequestContext(project: session.project, apiKeyID: session.keyID, deviceSecret: nil)
    ) { try await work() }
  }

  /// Which form field a refusal is about: the first whose API name starts its message;
  /// "form" (shown above the form) when none does.
  static func field(of failure: APIFailure, among fields: [(api: String, form: String)]) -> String {
    let text = failure.message.lowercased()
    return fields.first { text.hasPrefix($0.api.lowercased()) }?.form ?? "form"
  }

  /// `text` percent-encoded for a query string.
  static func queryValue(_ text: String) -> String {
    var allowed = CharacterSet.alphanumerics
    allowed.insert(charactersIn: "-._~")
    return text.addingPercentEncoding(withAllowedCharacters: allowed) ?? ""
  }

  /// A time as the API writes it (UTC, to the second).
  static func time(_ date: Date) -> String {
    date.formatted(.iso8601)
  }
}
