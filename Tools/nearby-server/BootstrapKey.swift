import CommandLineSupport
import Foundation
import Logging
@_spi(Resolver) import ResolverWire
import ServerStorage

/// The key a fresh server makes so that it works with nothing set up: an admin key of project
/// "default", written (mode 0600) to `--bootstrap-key-file`, by default
/// `$XDG_CONFIG_HOME/nearby/server-api-key` where local tools look for it.
enum BootstrapKey {
  /// Creates the key when the database has none, and writes it to `file` (mode 0600).
  static func ensure(in storage: any ResolverStorage, file: String, logger: Logger) async throws {
    let created = try await storage.transaction { store -> NewAPIKey? in
      guard try store.apiKeys.apiKeys().isEmpty else { return nil }
      return try store.apiKeys.createAPIKey(
        project: "default", role: .admin, label: "bootstrap", now: Date())
    }
    guard let created else { return }
    do {
      try FileManager.default.createDirectory(
        atPath: (file as NSString).deletingLastPathComponent, withIntermediateDirectories: true)
      guard
        FileManager.default.createFile(
          atPath: file, contents: Data((created.key + "\n").utf8),
          attributes: [.posixPermissions: 0o600])
      else { throw CommandFailure("cannot write \(file)") }
      logger.notice(
        "created an API key for project \"default\"",
        metadata: ["file": "\(file)", "key id": "\(created.record.id)"])
    } catch {
      logger.warning(
        "created an API key for project \"default\" but could not write it; revoke it and make another",
        metadata: ["key id": "\(created.record.id)", "error": "\(error)"])
    }
  }
}
