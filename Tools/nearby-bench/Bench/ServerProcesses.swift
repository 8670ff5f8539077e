import AsyncHTTPClient
import CommandLineSupport
import Foundation
import TestSupport

/// Resolver servers as operators run them: `nearby-server` processes (found beside this
/// program) on one database, each on its own loopback port, rate limit off.
struct ServerProcesses {
  private(set) var bases: [String]
  private let processes: [RunningProcess]

  /// Starts `count` servers on `database` and waits until each answers `/healthz` (at most
  /// 60 s each). `home` is their `$HOME` (the first-start key file goes there).
  /// - Throws: ``CommandFailure`` when `nearby-server` is not built or one does not start (with
  ///   what it printed).
  static func start(count: Int, database: String, home: String) async throws -> ServerProcesses {
    let executable: URL
    do {
      executable = try ChildProcess.built("nearby-server")
    } catch {
      throw CommandFailure(
        "nearby-server is not beside nearby-bench: swift build -c release --product nearby-server")
    }
    var environment = ProcessInfo.processInfo.environment
    environment["HOME"] = home
    var bases: [String] = []
    var processes: [RunningProcess] = []
    for _ in 0..<count {
      let port = try freePort()
      let process = try RunningProcess(
        executable,
        [
          "serve", "--database", database, "--port", "\(port)", "--log-level", "error",
          "--requests-per-second", "1000000000", "--burst", "1000000000",
          "--requests-per-second-per-device", "1000000000",
          "--requests-per-second-per-address", "1000000000",
          // The fleet's scripted reports name the tokens it was given at the start: they must
          // resolve for the whole run (15 min, the longest lifetime), not the default 2 min.
          "--token-lifetime", "900",
        ], environment: environment, combineOutput: true)
      processes.append(process)
      let base = "http://127.0.0.1:\(port)"
      guard await answers(base + "/healthz", within: .seconds(60), unless: process) else {
        for process in processes { process.kill() }
        throw CommandFailure(
          "nearby-server on port \(port) did not start:\n"
            + String(decoding: process.output, as: UTF8.self))
      }
      bases.append(base)
    }
    return ServerProcesses(bases: bases, processes: processes)
  }

  /// Stops every server with SIGTERM (graceful shutdown), SIGKILL after 10 s.
  func stop() async {
    for process in processes { process.signal(SIGTERM) }
    for process in processes where await process.exitStatus(timeout: .seconds(10)) == nil {
      process.kill()
    }
  }

  /// A loopback port nobody listens on now (the kernel's choice for port 0).
  private static func freePort() throws -> Int {
    let socket = Foundation.socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
    guard socket >= 0 else { throw CommandFailure("socket(): errno \(errno)") }
    defer { close(socket) }
    var address = sockaddr_in()
    address.sin_family = sa_family_t(AF_INET)
    address.sin_addr.s_addr = inet_addr("127.0.0.1")
    address.sin_port = 0
    var length = socklen_t(MemoryLayout<sockaddr_in>.size)
    let bound = withUnsafeMutablePointer(to: &address) { pointer in
      pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { raw in
        bind(socket, raw, length) == 0 && getsockname(socket, raw, &length) == 0
      }
    }
    guard bound else { throw CommandFailure("could not find a free port: errno \(errno)") }
    return Int(UInt16(bigEndian: address.sin_port))
  }

  private static func answers(_ url: String, within limit: Duration, unless process: RunningProcess)
    async -> Bool
  {
    let deadline = ContinuousClock.now + limit
    while ContinuousClock.now < deadline {
      if await process.exitStatus(timeout: .zero) != nil { return false }
      if let response = try? await HTTPClient.shared.execute(
        HTTPClientRequest(url: url), timeout: .seconds(2)), response.status.code == 200
      {
        return true
      }
      try? await Task.sleep(for: .milliseconds(100))
    }
    return false
  }
}
