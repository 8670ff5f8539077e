import AsyncHTTPClient
import Foundation
import Glibc
import Logging
import NIOCore
@_spi(Resolver) import ResolverWire
import ResolverClient

/// Where `nearby publish/subscribe` find their resolver: `--server`, or the local default on
/// 127.0.0.1:7171, which is started in the background (`nearby-server`, SQLite under
/// `$XDG_DATA_HOME`) when nothing answers there; and the API key to use with it.
struct ResolverConnection {
  /// The local resolver's port: 7171, or `NEARBY_LOCAL_PORT` (for tests and for people who
  /// have something else on 7171).
  static var localPort: Int {
    ProcessInfo.processInfo.environment["NEARBY_LOCAL_PORT"].flatMap(Int.init).flatMap {
      (1...65535).contains($0) ? $0 : nil
    } ?? LocalServer.defaultPort
  }
  static var localURL: URL { URL(string: "http://127.0.0.1:\(localPort)")! }

  var url: URL
  var apiKey: String
  /// The process id of a server this command started, if it did.
  var startedServer: Int32?

  /// Resolves the URL and the key, starting the local server if needed.
  /// - Throws: ``ExitFailure`` 69 when the resolver cannot be reached or started, 77 when no
  ///   key is found.
  static func resolve(
    server: String?, apiKey: String?, allowInsecureHTTP: Bool = false, note: (String) -> Void
  ) async throws -> ResolverConnection {
    let url = server.flatMap(URL.init(string:)) ?? localURL
    var check = ResolverClient.Configuration(url: url)
    check.allowsInsecureHTTP = allowInsecureHTTP
    if let refusal = check.insecureURLRefusal {
      throw ExitFailure(refusal, code: ExitCodes.usage)
    }
    var started: Int32?
    if await !isHealthy(url) {
      guard server == nil else {
        throw ExitFailure(
          "the resolver at \(url.absoluteString) does not answer (GET /healthz); check the URL, "
            + "or leave out --server to use a local one", code: ExitCodes.unavailable)
      }
      let (pid, log) = try startLocalServer()
      started = pid
      note("started a local resolver server in the background (pid \(pid), log \(log.path))")
      try await waitUntilHealthy(url, pid: pid, log: log)
    }
    let environment = ProcessInfo.processInfo.environment
    let keyFile = LocalServer.apiKeyFile
    let key =
      apiKey ?? environment["NEARBY_API_KEY"].flatMap { $0.isEmpty ? nil : $0 }
      ?? (server == nil ? readKey(keyFile) : nil)
    guard let key else {
      throw ExitFailure(
        server == nil
          ? "no API key: \(keyFile) is missing (the local server writes it when it creates its "
            + "first key); create one with `nearby server keys create --project default` and "
            + "pass it with --api-key or NEARBY_API_KEY"
          : "no API key for \(url.absoluteString): pass --api-key or set NEARBY_API_KEY "
            + "(the server's operator makes one with `nearby server keys create`)",
        code: ExitCodes.noPermission)
    }
    return ResolverConnection(url: url, apiKey: key, startedServer: started)
  }

  /// Whether `GET /healthz` answers 200 within a second.
  static func isHealthy(_ url: URL) async -> Bool {
    let request = HTTPClientRequest(url: url.appendingPathComponent("healthz").absoluteString)
    guard let response = try? await HTTPClient.shared.execute(request, timeout: .seconds(1))
    else { return false }
    return response.status == .ok
  }

  private static func readKey(_ path: String) -> String? {
    guard let text = try? String(contentsOfFile: path, encoding: .utf8) else { return nil }
    let key = text.trimmingCharacters(in: .whitespacesAndNewlines)
    return key.isEmpty ? nil : key
  }

  /// Starts `nearby-server` (found beside this executable) in a session of its own (so Ctrl-C
  /// in this terminal does not stop it), its output appended to
  /// `$XDG_STATE_HOME/nearby/server.log`.
  private static func startLocalServer() throws -> (Int32, URL) {
    let environment = ProcessInfo.processInfo.environment
    let stateHome =
      environment["XDG_STATE_HOME"].flatMap { $0.hasPrefix("/") ? $0 : nil }
      ?? (environment["HOME"] ?? NSHomeDirectory()) + "/.local/state"
    let folder = URL(fileURLWithPath: stateHome).appendingPathComponent("nearby")
    try? FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
    let log = folder.appendingPathComponent("server.log")

    var actions = posix_spawn_file_actions_t()
    posix_spawn_file_actions_init(&actions)
    defer { posix_spawn_file_actions_destroy(&actions) }
    posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
    posix_spawn_file_actions_addopen(&actions, 1, log.path, O_WRONLY | O_CREAT | O_APPEND, 0o600)
    posix_spawn_file_actions_adddup2(&actions, 1, 2)
    markDescriptorsCloseOnExec()
    var attributes = posix_spawnattr_t()
    posix_spawnattr_init(&attributes)
    defer { posix_spawnattr_destroy(&attributes) }
    // POSIX_SPAWN_SETSID (0x80, a GNU extension Swift's Glibc module does not export): a new
    // session, out of the terminal's process group. SETSIGDEF: SIGINT/SIGTERM back to default,
    // whatever this process ignores.
    let setSID: Int16 = 0x80
    posix_spawnattr_setflags(&attributes, setSID | Int16(POSIX_SPAWN_SETSIGDEF))
    var defaults = sigset_t()
    sigemptyset(&defaults)
    sigaddset(&defaults, SIGINT)
    sigaddset(&defaults, SIGTERM)
    posix_spawnattr_setsigdefault(&attributes, &defaults)

    let tool = try SiblingTool.server.path()
    // --no-config: the user's own server, never the system one's settings (run as root, the
    // server would otherwise read /etc/nearby/server.conf).
    let arguments = [
      "nearby-server", "--no-config", "--host", "127.0.0.1", "--port", "\(localPort)",
    ]
    var argv: [UnsafeMutablePointer<CChar>?] = arguments.map { strdup($0) } + [nil]
    defer { for pointer in argv { free(pointer) } }
    var pid: pid_t = 0
    let result = posix_spawn(&pid, tool, &actions, &attributes, &argv, environ)
    guard result == 0 else {
      throw ExitFailure(
        "could not start \(tool): \(String(cString: strerror(result))); start it yourself "
          + "or pass --server", code: ExitCodes.unavailable)
    }
    return (pid, log)
  }

  /// Sets close-on-exec on every descriptor above stderr, so the long-lived server inherits
  /// none of ours (a pipe the caller reads to its end would otherwise never close).
  private static func markDescriptorsCloseOnExec() {
    guard let names = try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/fd")
    else { return }
    for descriptor in names.compactMap(Int32.init) where descriptor > 2 {
      let flags = fcntl(descriptor, F_GETFD)
      if flags >= 0 && flags & FD_CLOEXEC == 0 {
        _ = fcntl(descriptor, F_SETFD, flags | FD_CLOEXEC)
      }
    }
  }

  private static func waitUntilHealthy(_ url: URL, pid: Int32, log: URL) async throws {
    let deadline = ContinuousClock.now + .seconds(20)
    while ContinuousClock.now < deadline {
      if await isHealthy(url) { return }
      var status: Int32 = 0
      if waitpid(pid, &status, WNOHANG) == pid {
        // Another command may have started one at the same moment: it wins the port.
        if await isHealthy(url) { return }
        throw ExitFailure(
          "the local resolver server exited at start; see \(log.path)", code: ExitCodes.unavailable)
      }
      try await Task.sleep(for: .milliseconds(100))
    }
    throw ExitFailure(
      "the local resolver server did not answer within 20 s; see \(log.path)",
      code: ExitCodes.unavailable)
  }
}
