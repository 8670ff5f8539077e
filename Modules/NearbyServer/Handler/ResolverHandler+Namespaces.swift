import OpenAPIRuntime
import ResolverAPI
import ServerStorage

/// Namespaces (contract §7): the project's own, and their visibility. Admin keys only (see
/// ``APIKeyMiddleware/adminOperations``).
extension ResolverHandler {
  func listNamespaces(_ input: Operations.ListNamespaces.Input) async throws
    -> Operations.ListNamespaces.Output
  {
    let project = try RequestContext.required().project
    let records = try await read { store in try store.namespaces.namespaces(project: project) }
    return .ok(.init(body: .json(.init(namespaces: records.map(Self.wire)))))
  }

  func setNamespaceVisibility(_ input: Operations.SetNamespaceVisibility.Input) async throws
    -> Operations.SetNamespaceVisibility.Output
  {
    let project = try RequestContext.required().project
    guard case .json(let body) = input.body else {
      throw APIFailure.badRequest("the body must be application/json")
    }
    let name = try Self.namespaceName(input.path.name)
    let visibility: NamespaceVisibility =
      switch body.visibility {
      case ._public: .public
      case .unlisted: .unlisted
      }
    let now = now()
    let record = try await transaction { store in
      try store.namespaces.setNamespaceVisibility(
        project: project, name: name, visibility: visibility, now: now)
    }
    return .ok(.init(body: .json(Self.wire(record))))
  }

  /// A namespace from the path: 1 to 64 characters of [A-Za-z0-9._-], else 400.
  static func namespaceName(_ name: String) throws -> String {
    do { _ = try NewAttachment(namespacedType: "\(name)/t", data: []) } catch {
      throw APIFailure.badRequest(
        "name: a namespace is 1 to 64 characters of [A-Za-z0-9._-], got "
          + "'\(TextRules.printable(name))'")
    }
    return name
  }

  static func wire(_ record: NamespaceRecord) -> Components.Schemas.Namespace {
    .init(
      name: record.name,
      visibility: record.visibility == .public ? ._public : .unlisted)
  }
}
