import CommandLineSupport
import ArgumentParser
import Foundation

/// `nearby background install`: a systemd user unit that runs nearby-restore for an app.
struct InstallCommand: AsyncParsableCommand {
  static let configuration = CommandConfiguration(
    commandName: "install",
    abstract: "Write (and enable) the systemd user unit that runs nearby-restore for an app.",
    discussion: """
      Writes nearby-restore-<app>.service (Type=notify, Restart=on-failure) into the user unit \
      folder, then runs `systemctl --user daemon-reload` and `systemctl --user enable --now` \
      when a user manager answers; otherwise prints the commands to run.
      """)

  @OptionGroup var options: StoreOptions

  @Option(help: "Where to write the unit (default: $XDG_CONFIG_HOME/systemd/user).")
  var unitDir: String?

  @Option(help: "The nearby-restore executable (default: next to this nearby, else on PATH).")
  var restorePath: String?

  @Option(
    help: """
      The resolver server nearby-restore reports to (passed as its --server); default: its \
      embedded resolver.
      """)
  var server: String?

  func validate() throws {
    if let server { try ResolverOptions.checkServerURL(server) }
  }

  @Flag(help: "Only write the unit; do not call systemctl.")
  var noEnable = false

  struct Output: Encodable {
    var unit: String
    var path: String
    var enabled: Bool
    var todo: [String]
  }

  static func unitName(app: String) -> String { "nearby-restore-\(app).service" }

  static func unit(
    app: String, executable: String, configDir: String?, server: String? = nil
  ) -> String {
    var command = "\(executable) --app \(app)"
    if let configDir { command += " --config-dir \(configDir)" }
    if let server { command += " --server \(server)" }
    return """
      [Unit]
      Description=Nearby background publications and subscriptions of \(app)

      [Service]
      Type=notify
      NotifyAccess=main
      ExecStart=\(command)
      Restart=on-failure
      RestartSec=5

      [Install]
      WantedBy=default.target

      """
  }

  func run() async throws {
    let environment = ProcessInfo.processInfo.environment
    let folder: URL
    if let unitDir {
      folder = URL(fileURLWithPath: unitDir)
    } else if let config = environment["XDG_CONFIG_HOME"], config.hasPrefix("/") {
      folder = URL(fileURLWithPath: config).appendingPathComponent("systemd/user")
    } else {
      folder = URL(fileURLWithPath: NSHomeDirectory()).appendingPathComponent(
        ".config/systemd/user")
    }
    let executable = try restorePath ?? Self.findRestore()
    let name = Self.unitName(app: options.app)
    let file = folder.appendingPathComponent(name)
    try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
    try Self.unit(
      app: options.app, executable: executable, configDir: options.configDir, server: server
    )
    .write(to: file, atomically: true, encoding: .utf8)

    let commands = [["daemon-reload"], ["enable", "--now", name]]
    var enabled = false
    var todo = commands.map { "systemctl --user " + $0.joined(separator: " ") }
    if !noEnable, await Self.systemctl(["show-environment"]) == 0 {
      var ok = true
      for command in commands where ok { ok = await Self.systemctl(command) == 0 }
      enabled = ok
      if ok { todo = [] }
    }
    if options.json {
      print(JSONLine.encode(Output(unit: name, path: file.path, enabled: enabled, todo: todo)))
    } else {
      print("wrote \(file.path)")
      if enabled {
        print("enabled and started \(name)")
      } else {
        print("systemctl --user is not available here; to enable the service, run:")
        for line in todo { print("  \(line)") }
      }
    }
  }

  /// nearby-restore next to this executable, else the first on PATH.
  static func findRestore() throws -> String {
    let own = URL(fileURLWithPath: "/proc/self/exe").resolvingSymlinksInPath()
    var candidates = [own.deletingLastPathComponent().appendingPathComponent("nearby-restore").path]
    let path = ProcessInfo.processInfo.environment["PATH"] ?? ""
    candidates += path.split(separator: ":").map { "\($0)/nearby-restore" }
    guard let found = candidates.first(where: { FileManager.default.isExecutableFile(atPath: $0) })
    else {
      throw ValidationError(
        "nearby-restore is neither next to nearby nor on PATH; build it (swift build --product "
          + "nearby-restore) or pass --restore-path")
    }
    return found
  }

  /// Runs `systemctl --user ARGS` on a thread of its own; its exit status (127 if it cannot run).
  static func systemctl(_ arguments: [String]) async -> Int32 {
    await withCheckedContinuation { continuation in
      Thread.detachNewThread {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = ["systemctl", "--user"] + arguments
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        do {
          try process.run()
          process.waitUntilExit()
          continuation.resume(returning: process.terminationStatus)
        } catch {
          continuation.resume(returning: 127)
        }
      }
    }
  }
}
