/// A tool's settings file: long options written one a line, read as if they had been given on
/// the command line, so that the file and the command line are checked by the same parser.
///
/// The format (documented for operators in docs/server-operators-guide.md):
/// ```
/// # a comment
/// port = 7171
/// trusted-proxy = 10.0.0.1
/// trusted-proxy = 10.0.0.2
/// open-metrics = true
/// ```
/// A name is an option's long name without its leading `--` (lower-case letters, digits and
/// `-`). `true` makes a flag's `--name`, `false` leaves it out; any other value is passed as
/// `--name value`, spaces inside it kept, one pair of surrounding double quotes removed. A name
/// may repeat (options that take several values).
public struct SettingsFile: Sendable, Equatable {
  /// One `name = value` line.
  public struct Setting: Sendable, Equatable {
    /// The option's long name, without `--`.
    public var name: String
    /// The value as written (quotes removed).
    public var value: String
    /// Its line in the file (from 1), for messages.
    public var line: Int
  }

  /// The most a settings file may hold: it is read whole.
  public static let maximumBytes = 65_536

  /// The file's path, as given (for messages).
  public let path: String
  /// Its settings, in the file's order.
  public let settings: [Setting]

  /// Parses the text of a settings file.
  /// - Throws: ``SettingsFileError`` naming the line and what is wrong with it.
  public init(parsing text: String, path: String) throws(SettingsFileError) {
    guard text.utf8.count <= Self.maximumBytes else {
      throw SettingsFileError(
        "\(path): \(text.utf8.count) bytes, over the \(Self.maximumBytes) a settings file may hold")
    }
    var settings: [Setting] = []
    for (index, raw) in text.split(separator: "\n", omittingEmptySubsequences: false).enumerated() {
      let line = raw.trimmingWhitespace()
      if line.isEmpty || line.hasPrefix("#") { continue }
      guard let equals = line.firstIndex(of: "=") else {
        throw SettingsFileError("\(path):\(index + 1): expected `name = value`, got \"\(line)\"")
      }
      let name = line[..<equals].trimmingWhitespace()
      var value = line[line.index(after: equals)...].trimmingWhitespace()
      guard let first = name.first, first.isLowercaseASCIILetterOrDigit,
        name.allSatisfy({ $0.isLowercaseASCIILetterOrDigit || $0 == "-" })
      else {
        throw SettingsFileError(
          "\(path):\(index + 1): \"\(name)\" is not an option name (lower-case letters, digits "
            + "and -, without the leading --)")
      }
      if value.count >= 2, value.hasPrefix("\""), value.hasSuffix("\"") {
        value = String(value.dropFirst().dropLast())
      }
      settings.append(Setting(name: name, value: value, line: index + 1))
    }
    self.path = path
    self.settings = settings
  }

  /// The settings as command-line arguments: `--name value`, or `--name` for `true`, nothing
  /// for `false`.
  /// - Parameter names: the names to keep (nil: all of them).
  public func arguments(keeping names: Set<String>? = nil) -> [String] {
    settings.flatMap { setting -> [String] in
      if let names, !names.contains(setting.name) { return [] }
      switch setting.value {
      case "true": return ["--\(setting.name)"]
      case "false": return []
      default: return ["--\(setting.name)", setting.value]
      }
    }
  }
}

/// A settings file that cannot be used; the description names the file, the line and the fix.
public struct SettingsFileError: Error, CustomStringConvertible, Equatable {
  public let description: String
  public init(_ description: String) { self.description = description }
}

extension Character {
  fileprivate var isLowercaseASCIILetterOrDigit: Bool {
    ("a"..."z").contains(self) || ("0"..."9").contains(self)
  }
}

extension StringProtocol {
  fileprivate func trimmingWhitespace() -> String {
    let isSpace: (Character) -> Bool = { $0 == " " || $0 == "\t" || $0 == "\r" }
    guard let start = firstIndex(where: { !isSpace($0) }) else { return "" }
    let end = lastIndex(where: { !isSpace($0) }) ?? start
    return String(self[start...end])
  }
}
