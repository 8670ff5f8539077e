import Foundation
import TestSupport
import Testing
import NearbyTesting

/// A `nearby server` started for a CLI test, in its own folder, with the admin key it wrote
/// at its first start.
struct CLIServer {
  let folder: URL
  let environment: [String: String]
  let process: CLIProcess
  let url: String
  let key: String

  /// `--server URL --api-key KEY`, for the commands that talk to it.
  var common: [String] { ["--server", url, "--api-key", key] }

  /// Starts the server and waits (bounded) until it answers with its first key.
  static func start() async throws -> CLIServer {
    let (folder, environment, port) = try CLIEnvironment.make()
    let process = try CLIProcess(
      ["server", "--port", "\(port)", "--log-level", "warning"], environment: environment)
    let keyFile = folder.appendingPathComponent("config/nearby/server-api-key").path
    let url = "http://127.0.0.1:\(port)"
    func writtenKey() -> String {
      (try? String(contentsOfFile: keyFile, encoding: .utf8))?
        .trimmingCharacters(in: .whitespacesAndNewlines) ?? ""
    }
    // The key once the server answers a request made with it (or, after 30 s, whatever the
    // file holds: the tests then say what went wrong).
    let answered = try await waitForValue(timeout: .seconds(30), interval: .milliseconds(200)) {
      () async throws -> String? in
      let key = writtenKey()
      guard !key.isEmpty else { return nil }
      let listing = try await CLIEnvironment.run(
        ["beacons", "list", "--server", url, "--api-key", key], environment: environment)
      return listing.status == 0 ? key : nil
    }
    let key = answered ?? writtenKey()
    guard !key.isEmpty else {
      process.signal(SIGTERM)
      throw CLIServerError(description: "the server wrote no key: \(process.errors)")
    }
    return CLIServer(
      folder: folder, environment: environment, process: process, url: url, key: key)
  }

  /// Runs `nearby ARGUMENTS` against this server's folder.
  func run(_ arguments: [String]) async throws -> (status: Int32, out: String, err: String) {
    try await CLIEnvironment.run(arguments, environment: environment)
  }

  /// Stops the server and removes its folder.
  func stop() {
    process.signal(SIGTERM)
    try? FileManager.default.removeItem(at: folder)
  }
}

struct CLIServerError: Error, CustomStringConvertible {
  var description: String
}
