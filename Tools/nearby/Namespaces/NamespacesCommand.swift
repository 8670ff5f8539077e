import ArgumentParser
import Foundation
import OpenAPIRuntime
import ResolverAPI

/// `nearby namespaces`: the project's namespaces on the resolver and their visibility.
struct NamespacesCommand: AsyncParsableCommand {
  static let configuration = CommandConfiguration(
    commandName: "namespaces",
    abstract: "The project's namespaces on the resolver, and who may read their attachments.",
    discussion: """
      A project owns a namespace from the first attachment it adds in it. A public namespace's
      attachments reach any project whose beacon subscription names it; an unlisted one's
      (the default) only the owner's. Needs an admin key.
      """,
    subcommands: [NamespacesListCommand.self, NamespacesSetVisibilityCommand.self])
}

/// `nearby namespaces list`.
struct NamespacesListCommand: AsyncParsableCommand {
  static let configuration = CommandConfiguration(
    commandName: "list", abstract: "List the namespaces the project owns, with their visibility.")

  @OptionGroup var server: BeaconServerOptions

  func run() async throws {
    try await BeaconServer.run {
      let connection = try await BeaconServer.connect(server)
      let namespaces: [Components.Schemas.Namespace]
      switch try await connection.client.listNamespaces() {
      case .ok(let ok): namespaces = try ok.body.json.namespaces
      case .unauthorized(let answer): throw connection.refused(401, try? answer.body.json)
      case .forbidden(let answer): throw connection.refused(403, try? answer.body.json)
      case .tooManyRequests(let answer): throw connection.refused(429, try? answer.body.json)
      case .undocumented(let status, _): throw connection.refused(status, nil)
      }
      for namespace in namespaces {
        print(
          server.json
            ? try BeaconServer.json(namespace)
            : "\(namespace.name)\t\(namespace.visibility.rawValue)")
      }
    }
  }
}

/// `nearby namespaces set-visibility NAME public|unlisted`.
struct NamespacesSetVisibilityCommand: AsyncParsableCommand {
  static let configuration = CommandConfiguration(
    commandName: "set-visibility",
    abstract: "Make a namespace public (any project naming it reads it) or unlisted.",
    discussion: """
      Claims the namespace for the project if nobody owns it yet; a namespace of another
      project is refused (exit 77).
      Example:
        nearby namespaces set-visibility com.example.menus public
      """)

  @OptionGroup var server: BeaconServerOptions
  @Argument(help: "The namespace: 1 to 64 characters of [A-Za-z0-9._-].") var name: String
  @Argument(help: "public or unlisted.") var visibility: Visibility

  enum Visibility: String, ExpressibleByArgument, CaseIterable {
    case `public`, unlisted
  }

  func validate() throws {
    let allowed = name.utf8.allSatisfy {
      switch $0 {
      case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"),
        UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "."), UInt8(ascii: "_"),
        UInt8(ascii: "-"):
        true
      default: false
      }
    }
    guard (1...64).contains(name.utf8.count), allowed else {
      throw ValidationError(
        "a namespace is 1 to 64 characters of [A-Za-z0-9._-], got \"\(name)\"")
    }
  }

  func run() async throws {
    try await BeaconServer.run {
      let connection = try await BeaconServer.connect(server)
      let wanted: Components.Schemas.NamespaceVisibility =
        visibility == .public ? ._public : .unlisted
      let namespace: Components.Schemas.Namespace
      switch try await connection.client.setNamespaceVisibility(
        path: .init(name: name), body: .json(.init(visibility: wanted)))
      {
      case .ok(let ok): namespace = try ok.body.json
      case .badRequest(let answer): throw connection.refused(400, try? answer.body.json)
      case .unauthorized(let answer): throw connection.refused(401, try? answer.body.json)
      case .forbidden(let answer): throw connection.refused(403, try? answer.body.json)
      case .contentTooLarge(let answer): throw connection.refused(413, try? answer.body.json)
      case .tooManyRequests(let answer): throw connection.refused(429, try? answer.body.json)
      case .undocumented(let status, _): throw connection.refused(status, nil)
      }
      print(
        server.json
          ? try BeaconServer.json(namespace)
          : "\(namespace.name)\t\(namespace.visibility.rawValue)")
    }
  }
}
