import Foundation
import HTTPTypes
import Hummingbird
import ResolverAPI
import ServerStorage

/// The namespaces page: the project's namespaces and their visibility, changed through the
/// API's `setNamespaceVisibility`.
extension Console {
  func registerNamespaces(on router: Router<AddressedRequestContext>) {
    router.get("console/namespaces") { request, context in
      await signedIn(request, context) { session in
        let done = Self.query(of: request).text("done")
        return try await namespaces(
          session: session, notice: done.isEmpty ? nil : "Namespace \(done) changed.", error: nil,
          status: .ok)
      }
    }
    router.post("console/namespaces") { request, context in
      await signedInForm(request, context) { session, form in
        let name = form.text("name")
        guard
          let visibility = Components.Schemas.NamespaceVisibility(rawValue: form.text("visibility"))
        else {
          return try await namespaces(
            session: session, notice: nil, error: "visibility must be public or unlisted",
            status: .badRequest)
        }
        do {
          try await asAPI(session) {
            _ = try await handler.setNamespaceVisibility(
              .init(path: .init(name: name), body: .json(.init(visibility: visibility)))
            ).ok
          }
        } catch let failure as APIFailure where failure.status.code < 500 {
          return try await namespaces(
            session: session, notice: nil, error: failure.message, status: failure.status)
        }
        return Self.redirect(to: "/console/namespaces?done=\(Self.queryValue(name))")
      }
    }
  }

  func namespaces(
    session: ConsoleSession, notice: String?, error: String?, status: HTTPResponse.Status
  ) async throws -> Response {
    let listed = try await asAPI(session) {
      try await handler.listNamespaces(.init()).ok.body.json.namespaces
    }
    var values: [String: Any] = [
      "namespaces": listed.map { namespace -> [String: Any] in
        let visibility = namespace.visibility.rawValue
        return [
          "name": namespace.name, "visibility": visibility,
          "other": visibility == "public" ? "unlisted" : "public",
        ]
      },
      "hasNamespaces": !listed.isEmpty,
    ]
    if let notice { values["notice"] = notice }
    if let error { values["error"] = error }
    return page(.namespaces, title: "Namespaces", values: values, session: session, status: status)
  }
}
