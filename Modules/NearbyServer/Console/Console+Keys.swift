import Foundation
import HTTPTypes
import Hummingbird
import ServerStorage

/// The API keys page: the project's keys; create one with a role (its text shown once, in
/// the answer to the form, never again); revoke one (its console sessions end with it).
extension Console {
  /// The longest key label, in UTF-8 bytes.
  static let maximumLabelBytes = 256

  func registerKeys(on router: Router<AddressedRequestContext>) {
    router.get("console/keys") { request, context in
      await signedIn(request, context) { session in
        let done = Self.query(of: request).text("revoked")
        return try await keys(
          session: session, created: nil, notice: done.isEmpty ? nil : "Key \(done) revoked.",
          label: "", error: nil, status: .ok)
      }
    }
    router.post("console/keys") { request, context in
      await signedInForm(request, context) { session, form in
        let label = form["label"] ?? ""
        let role = APIKeyRole(rawValue: form.text("role")) ?? .client
        do {
          try TextRules.check(label, field: "label", maximumBytes: Self.maximumLabelBytes)
        } catch let error as BeaconInputError {
          return try await keys(
            session: session, created: nil, notice: nil, label: label, error: error.description,
            status: ResolverHandler.failure(for: error).status)
        }
        let (project, now) = (session.project, now)
        let created = try await handler.transaction { store in
          try store.apiKeys.createAPIKey(project: project, role: role, label: label, now: now)
        }
        return try await keys(
          session: session, created: created, notice: nil, label: "", error: nil, status: .created)
      }
    }
    router.post("console/keys/revoke") { request, context in
      await signedInForm(request, context) { session, form in
        let (id, project, now) = (form.text("id"), session.project, now)
        let revoked = try await handler.transaction { store -> Bool in
          // Only this project's keys.
          guard try store.apiKeys.apiKeys(project: project).contains(where: { $0.id == id }) else {
            return false
          }
          return try store.apiKeys.revokeAPIKey(id: id, now: now)
        }
        guard revoked else {
          throw APIFailure.notFound(
            "There is no active key \(TextRules.printable(id)) in this project.")
        }
        if id == session.keyID {
          return Self.redirect(to: "/console/sign-in")
        }
        return Self.redirect(to: "/console/keys?revoked=\(Self.queryValue(id))")
      }
    }
  }

  func keys(
    session: ConsoleSession, created: NewAPIKey?, notice: String?, label: String, error: String?,
    status: HTTPResponse.Status
  ) async throws -> Response {
    let project = session.project
    let records = try await handler.read { store in try store.apiKeys.apiKeys(project: project) }
    var values: [String: Any] = [
      "keys": records.map { record -> [String: Any] in
        [
          "id": record.id, "role": record.role.rawValue, "label": record.label,
          "created": Self.time(record.createdAt),
          "state": record.revokedAt.map { "revoked \(Self.time($0))" } ?? "active",
          "isActive": !record.isRevoked, "isCurrent": record.id == session.keyID,
        ]
      },
      "values": ["label": label],
    ]
    if let error { values["errors"] = ["label": error] }
    if let notice { values["notice"] = notice }
    if let created {
      values["newKey"] = [
        "key": created.key, "id": created.record.id, "role": created.record.role.rawValue,
      ]
    }
    return page(.keys, title: "API keys", values: values, session: session, status: status)
  }
}
