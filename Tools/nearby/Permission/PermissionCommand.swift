import CommandLineSupport
import ArgumentParser
import Foundation
import PermissionStore

/// `nearby permission status|grant|revoke|reset`: the user's Nearby permission of an app.
struct PermissionCommand: AsyncParsableCommand {
  static let configuration = CommandConfiguration(
    commandName: "permission",
    abstract: "Show, grant or revoke an app's Nearby permission (shared by all its processes).",
    discussion: """
      A running app (and nearby-restore) follows the change at once: granting resumes its \
      paused publications and subscriptions, revoking pauses them.
      """,
    subcommands: [Status.self, Grant.self, Revoke.self, Reset.self])

  struct Output: Encodable {
    var app: String
    /// "granted", "denied" or "not-asked".
    var permission: String
    var file: String
  }

  static func report(_ permission: NearbyPermission, _ options: StoreOptions) -> String {
    let state =
      !permission.isDetermined ? "not-asked" : permission.isGranted ? "granted" : "denied"
    if options.json {
      return JSONLine.encode(
        Output(app: options.app, permission: state, file: permission.store.fileURL.path))
    }
    return "\(options.app): Nearby permission \(state.replacingOccurrences(of: "-", with: " "))"
  }

  struct Status: AsyncParsableCommand {
    static let configuration = CommandConfiguration(abstract: "Show the permission.")
    @OptionGroup var options: StoreOptions
    func run() async throws {
      let permission = NearbyPermission(store: try await options.openStore(), prompt: .never)
      print(PermissionCommand.report(permission, options))
    }
  }

  struct Grant: AsyncParsableCommand {
    static let configuration = CommandConfiguration(abstract: "Grant Nearby permission.")
    @OptionGroup var options: StoreOptions
    func run() async throws {
      let permission = NearbyPermission(store: try await options.openStore(), prompt: .never)
      try await permission.setGranted(true)
      print(PermissionCommand.report(permission, options))
    }
  }

  struct Revoke: AsyncParsableCommand {
    static let configuration = CommandConfiguration(abstract: "Revoke Nearby permission.")
    @OptionGroup var options: StoreOptions
    func run() async throws {
      let permission = NearbyPermission(store: try await options.openStore(), prompt: .never)
      try await permission.setGranted(false)
      print(PermissionCommand.report(permission, options))
    }
  }

  struct Reset: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
      abstract: "Forget the answer: the app asks again on its next publish or subscribe.")
    @OptionGroup var options: StoreOptions
    func run() async throws {
      let permission = NearbyPermission(store: try await options.openStore(), prompt: .never)
      try await permission.reset()
      print(PermissionCommand.report(permission, options))
    }
  }
}
