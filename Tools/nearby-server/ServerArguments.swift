import CommandLineSupport
import Foundation

/// Where `nearby-server` reads its settings file, and how the file's settings join the command
/// line: they go right after the subcommand's name, before the arguments given, so that an
/// option given on the command line wins (ArgumentParser keeps an option's last value).
///
/// The file is `--config FILE`; with neither `--config` nor `--no-config`, `/etc/nearby/server.conf`
/// when the tool runs as root and that file exists (the package's service reads it, and so do
/// `sudo nearby-server keys …`). The `keys` commands take only `database` from it.
enum ServerArguments {
  /// The settings file the Debian package installs (and its service names).
  static let systemSettingsFile = "/etc/nearby/server.conf"

  /// The arguments to parse: `arguments` with the settings file's options put in.
  /// - Parameters:
  ///   - arguments: the command line, without the program's name.
  ///   - isRoot: whether the process runs as root (then the system file is the default).
  /// - Returns: the arguments, and the file read (nil when none).
  /// - Throws: ``SettingsFileError`` when the file cannot be read or parsed.
  static func expand(_ arguments: [String], isRoot: Bool) throws -> (
    arguments: [String], file: SettingsFile?
  ) {
    guard let path = settingsPath(in: arguments, isRoot: isRoot) else { return (arguments, nil) }
    let file = try read(path)
    // The subcommand's path: `serve`, `keys`, `keys create|list|revoke`, or none (serve, the
    // default subcommand).
    var pathLength = 0
    if arguments.first == "serve" {
      pathLength = 1
    } else if arguments.first == "keys" {
      pathLength = arguments.count > 1 && !arguments[1].hasPrefix("-") ? 2 : 1
    }
    let keep: Set<String>? = arguments.first == "keys" ? ["database"] : nil
    let inserted = file.arguments(keeping: keep)
    return (Array(arguments[..<pathLength]) + inserted + arguments[pathLength...], file)
  }

  /// The settings file named by the arguments, or the default.
  static func settingsPath(in arguments: [String], isRoot: Bool) -> String? {
    var index = arguments.startIndex
    while index < arguments.endIndex {
      let argument = arguments[index]
      if argument == "--" { break }
      if argument == "--no-config" { return nil }
      if argument == "--config", index + 1 < arguments.endIndex { return arguments[index + 1] }
      if argument.hasPrefix("--config=") { return String(argument.dropFirst("--config=".count)) }
      index += 1
    }
    guard isRoot, FileManager.default.fileExists(atPath: systemSettingsFile) else { return nil }
    return systemSettingsFile
  }

  private static func read(_ path: String) throws -> SettingsFile {
    guard let handle = FileHandle(forReadingAtPath: path) else {
      throw SettingsFileError(
        "cannot read the settings file \(path) (no such file, or not allowed)")
    }
    defer { try? handle.close() }
    let data = (try? handle.read(upToCount: SettingsFile.maximumBytes + 1)) ?? Data()
    guard let text = String(data: data, encoding: .utf8) else {
      throw SettingsFileError("\(path) is not UTF-8 text")
    }
    return try SettingsFile(parsing: text, path: path)
  }
}
