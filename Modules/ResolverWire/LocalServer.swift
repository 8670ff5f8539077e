import Foundation

/// What a resolver server started on this machine with no settings (`nearby-server`, or
/// `nearby server`) and the local tools that use it agree on: its port and the file where it
/// writes the API key it makes on first start.
public enum LocalServer {
  /// The port a local server listens on unless told otherwise.
  public static let defaultPort = 7171

  /// The bootstrap key file: `$XDG_CONFIG_HOME/nearby/server-api-key`, or
  /// `~/.config/nearby/server-api-key` when `XDG_CONFIG_HOME` is unset or not absolute.
  /// - Parameter environment: the variables to read (`ProcessInfo`'s for the running process).
  public static func apiKeyFile(environment: [String: String]) -> String {
    let base =
      environment["XDG_CONFIG_HOME"].flatMap { $0.hasPrefix("/") ? $0 : nil }
      ?? (environment["HOME"] ?? NSHomeDirectory()) + "/.config"
    return base + "/nearby/server-api-key"
  }

  /// The bootstrap key file of this process's environment (see ``apiKeyFile(environment:)``).
  public static var apiKeyFile: String {
    apiKeyFile(environment: ProcessInfo.processInfo.environment)
  }
}
