import ArgumentParser
import Foundation
import PermissionStore

/// The options every store-backed command takes: which app, where its store is, JSON output.
struct StoreOptions: ParsableArguments {
  /// The app id `nearby publish` and `nearby subscribe` use when none is given.
  static let defaultApp = "nearby"

  @Option(help: "The app id (its store is <config-dir>/<app>.json); the same default as publish.")
  var app: String = StoreOptions.defaultApp

  @Option(help: "The store folder (default: $XDG_CONFIG_HOME/nearby or ~/.config/nearby).")
  var configDir: String?

  @Flag(help: "Print the result as one JSON object.")
  var json = false

  var directory: URL? { configDir.map { URL(fileURLWithPath: $0) } }

  func openStore() async throws -> DefaultsStore {
    try await DefaultsStore(appID: app, directory: directory)
  }
}
