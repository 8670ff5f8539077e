import CommandLineSupport
import Foundation
import Testing

/// `--version` of the tools, and `nearby-server`'s settings file (`--config`), the way the
/// Debian package's service and an operator's `nearby-server keys …` use it.
@Suite("Versions and the server's settings file")
struct ServerSettingsTests {
  @Test func theToolsPrintTheOneVersion() async throws {
    let (folder, environment, _) = try CLIEnvironment.make()
    defer { try? FileManager.default.removeItem(at: folder) }
    for arguments in [["--version"], ["server", "--version"]] {
      let result = try await CLIEnvironment.run(arguments, environment: environment)
      #expect(result.status == 0, "\(arguments): \(result.err)")
      #expect(result.out.trimmingCharacters(in: .whitespacesAndNewlines) == NearbyVersion.current)
    }
  }

  @Test func keysCommandsTakeTheDatabaseFromTheFileAndNothingElse() async throws {
    let (folder, environment, _) = try CLIEnvironment.make()
    defer { try? FileManager.default.removeItem(at: folder) }
    let database = folder.appendingPathComponent("from-file.sqlite").path
    let settings = folder.appendingPathComponent("server.conf")
    // `port` is the server's, not the keys commands': it must not reach them.
    try Data("# test\ndatabase = \(database)\nport = 7199\n".utf8).write(to: settings)

    let created = try await CLIEnvironment.run(
      [
        "server", "keys", "create", "--config", settings.path, "--project", "cafe", "--role",
        "admin", "--json",
      ], environment: environment)
    #expect(created.status == 0, "\(created.err)")
    #expect(FileManager.default.fileExists(atPath: database))

    // The same database named on the command line lists the key; the default one has none.
    let listed = try await CLIEnvironment.run(
      ["server", "keys", "list", "--no-config", "--database", database],
      environment: environment)
    #expect(listed.status == 0, "\(listed.err)")
    #expect(listed.out.contains("cafe"), "\(listed.out)")
    let elsewhere = try await CLIEnvironment.run(
      ["server", "keys", "list", "--no-config"], environment: environment)
    #expect(!elsewhere.out.contains("cafe"), "\(elsewhere.out)")
  }

  @Test func helpAndTheVersionNeedNoSettingsWhereverConfigStands() async throws {
    let (folder, environment, _) = try CLIEnvironment.make()
    defer { try? FileManager.default.removeItem(at: folder) }
    let settings = folder.appendingPathComponent("server.conf")
    try Data("port = 7199\n".utf8).write(to: settings)
    for (arguments, overview) in [
      (["--config", settings.path, "--help"], "The resolver server of Nearby for Linux"),
      (["--config", settings.path, "keys", "--help"], "Create, list and revoke"),
      (["keys", "list", "--help", "--config", settings.path], "List keys"),
    ] {
      let result = try await CLIEnvironment.run(["server"] + arguments, environment: environment)
      #expect(result.status == 0, "\(arguments): \(result.err)")
      #expect(result.out.contains(overview), "\(arguments): \(result.out)")
    }
    let version = try await CLIEnvironment.run(
      ["server", "--config", settings.path, "--version"], environment: environment)
    #expect(version.out.trimmingCharacters(in: .whitespacesAndNewlines) == NearbyVersion.current)
  }

  @Test func aBadSettingIsNamedWithItsFile() async throws {
    let (folder, environment, _) = try CLIEnvironment.make()
    defer { try? FileManager.default.removeItem(at: folder) }
    let settings = folder.appendingPathComponent("server.conf")

    try Data("port = 7199\nlisten on all\n".utf8).write(to: settings)
    let malformed = try await CLIEnvironment.run(
      ["server", "--config", settings.path], environment: environment)
    #expect(malformed.status != 0)
    #expect(
      malformed.err.contains("\(settings.path):2: expected `name = value`"), "\(malformed.err)")

    try Data("colour = red\n".utf8).write(to: settings)
    let unknown = try await CLIEnvironment.run(
      ["server", "serve", "--config", settings.path], environment: environment)
    #expect(unknown.status == 64)
    #expect(unknown.err.contains("--colour"), "\(unknown.err)")
    #expect(unknown.err.contains("options read from \(settings.path)"), "\(unknown.err)")

    let missing = try await CLIEnvironment.run(
      ["server", "--config", folder.appendingPathComponent("none.conf").path],
      environment: environment)
    #expect(missing.status != 0)
    #expect(missing.err.contains("cannot read the settings file"), "\(missing.err)")
  }
}
