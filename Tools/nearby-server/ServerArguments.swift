import CommandLineSupport
import Foundation

/// Where `nearby-server` reads its settings file, and how the file's settings join the command
/// line: they go right after the subcommand's name, before the arguments given, so that an
/// option given on the command line wins (ArgumentParser keeps an option's last value).
///
/// The file is `--config FILE`; with neither `--config` nor `--no-config`, `/etc/nearby/server.conf`
/// when the tool runs as root and that file exists (the package's service reads it, and so do
/// `sudo nearby-server keys …`). The `keys` commands take only `database` from it. `--config`
/// and `--no-config` are taken out of the arguments here, wherever they stand; ArgumentParser
/// declares them only for the help.
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
    let (rest, choice) = takeSettingsChoice(from: arguments)
    let path: String?
    switch choice {
    case .none: path = nil
    case .file(let file): path = file
    case .default:
      path =
        isRoot && FileManager.default.fileExists(atPath: systemSettingsFile)
        ? systemSettingsFile : nil
    }
    guard let path else { return (rest, nil) }
    let file = try read(path)
    // Help and the version need no settings (and options put before them would turn
    // `nearby-server --help` into the default subcommand's help).
    let asksForHelp = rest.contains { ["-h", "--help", "--version", "help"].contains($0) }
    // The subcommand's path: `serve`, `keys create|list|revoke`, or none (serve, the default
    // subcommand). `keys` alone has no options to take.
    let pathLength: Int
    let keep: Set<String>?
    switch rest.first {
    case "serve": (pathLength, keep) = (1, nil)
    case "keys":
      guard rest.count > 1, !rest[1].hasPrefix("-") else { return (rest, file) }
      (pathLength, keep) = (2, ["database"])
    default: (pathLength, keep) = (0, nil)
    }
    if asksForHelp { return (rest, file) }
    return (Array(rest[..<pathLength]) + file.arguments(keeping: keep) + rest[pathLength...], file)
  }

  /// Which settings file the arguments ask for.
  enum SettingsChoice: Equatable {
    /// Neither `--config` nor `--no-config`: the system file for root.
    case `default`
    /// `--no-config`.
    case none
    /// `--config FILE`.
    case file(String)
  }

  /// The arguments without `--config FILE`, `--config=FILE` and `--no-config` (read here, not
  /// by ArgumentParser, wherever they stand before `--`), and what they asked for.
  static func takeSettingsChoice(from arguments: [String]) -> (
    rest: [String], choice: SettingsChoice
  ) {
    var rest: [String] = []
    var choice = SettingsChoice.default
    var index = arguments.startIndex
    while index < arguments.endIndex {
      let argument = arguments[index]
      if argument == "--" {
        rest += arguments[index...]
        break
      }
      if argument == "--no-config" {
        choice = .none
      } else if argument == "--config", index + 1 < arguments.endIndex {
        choice = .file(arguments[index + 1])
        index += 1
      } else if argument.hasPrefix("--config=") {
        choice = .file(String(argument.dropFirst("--config=".count)))
      } else {
        rest.append(argument)
      }
      index += 1
    }
    return (rest, choice)
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
