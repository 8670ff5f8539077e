import ArgumentParser

/// `--resolver`: how `nearby publish` and `nearby subscribe` turn heard tokens into found and
/// lost.
///
/// With no `--resolver`, ``chosen(explicit:server:environment:beacons:)`` picks `server`
/// when a server is given (`--server` or `NEARBY_SERVER`), `local` for `--beacons` (beacon
/// attachments live on a server), and `peer` otherwise: two machines with nothing else
/// running meet.
enum ResolverMode: String, CaseIterable, ExpressibleByArgument, Sendable {
  /// Peer resolution (no server): each device runs the engine and asks a token's owner over
  /// the LAN.
  case peer
  /// The resolver server at `--server` / `NEARBY_SERVER`.
  case server
  /// The local server on 127.0.0.1:7171, started in the background when none answers.
  case local

  /// The environment variable that gives the server when `--server` is absent.
  static let serverEnvironmentVariable = "NEARBY_SERVER"

  /// The mode a command runs in, and the server URL text for `server` mode.
  /// - Throws: `ValidationError` naming the fix: `server` with no server given, or a server
  ///   given with `peer`/`local`.
  static func chosen(
    explicit: ResolverMode?, server: String?, environment: [String: String], beacons: Bool
  ) throws -> (mode: ResolverMode, server: String?) {
    let fromEnvironment = environment[serverEnvironmentVariable].flatMap {
      $0.isEmpty ? nil : $0
    }
    let given = server
    let server = server ?? fromEnvironment
    switch explicit {
    case .server?:
      guard let server else {
        throw ValidationError(
          "--resolver server needs a server: pass --server URL or set NEARBY_SERVER "
            + "(or use --resolver peer, which needs none)")
      }
      return (.server, server)
    case let mode?:
      if given != nil {
        // `--server` with peer or local contradicts itself; NEARBY_SERVER is only a default.
        throw ValidationError(
          "--server is for --resolver server; drop --server to use --resolver \(mode.rawValue)")
      }
      if mode == .peer, beacons {
        throw ValidationError(
          "--beacons needs a resolver server (beacon attachments are registered there): "
            + "use --resolver local or --server URL")
      }
      return (mode, nil)
    case nil:
      if let server { return (.server, server) }
      return (beacons ? .local : .peer, nil)
    }
  }
}
