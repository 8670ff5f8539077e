import ArgumentParser
import Foundation

/// `--server` and `--api-key`: which resolver server a command talks to and with which
/// project key (``ResolverConnection`` fills in the defaults; `nearby publish` and
/// `subscribe` add `--resolver`, ``PeerOptions``).
struct ResolverOptions: ParsableArguments {
  @Option(
    help: ArgumentHelp(
      "The resolver server's URL (default: $NEARBY_SERVER; with neither, publish and subscribe use peer resolution and beacon commands the local server on 127.0.0.1:7171, started when none answers).",
      valueName: "url"))
  var server: String?

  @Option(
    help: ArgumentHelp(
      "The project API key (default: $NEARBY_API_KEY, else the local server's key file, or with --resolver peer the open default key).",
      valueName: "key"))
  var apiKey: String?

  @Flag(
    help: """
      Send the API key and device secret over plain http:// to a server that is not on this \
      host (refused otherwise: anyone on the path could read them; prefer https://).
      """)
  var allowInsecureHTTP = false

  /// `--server`, else `NEARBY_SERVER` (empty counts as unset).
  var serverOrEnvironment: String? {
    server
      ?? ProcessInfo.processInfo.environment[ResolverMode.serverEnvironmentVariable].flatMap {
        $0.isEmpty ? nil : $0
      }
  }

  func validate() throws {
    if let server { try Self.checkServerURL(server) }
    if let apiKey, apiKey.isEmpty { throw ValidationError("--api-key must not be empty") }
  }

  /// Refuses a `--server` value that is not an http(s) URL with a host.
  static func checkServerURL(_ server: String) throws {
    guard let url = URL(string: server), let scheme = url.scheme,
      ["http", "https"].contains(scheme),
      url.host != nil
    else {
      throw ValidationError(
        "--server must be an http(s) URL such as http://host:7171, got \(server)")
    }
  }
}
