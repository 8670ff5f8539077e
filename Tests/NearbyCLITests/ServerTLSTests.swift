import Foundation
import TestSupport
import Testing
import NearbyTesting

/// `nearby server --tls-certificate --tls-key`: HTTPS with no proxy, the certificate re-read on
/// SIGHUP (what `systemctl reload` and a renewal hook send).
@Suite("The server over HTTPS")
struct ServerTLSTests {
  @Test func aHangUpServesTheRenewedCertificate() async throws {
    let (folder, environment, port) = try CLIEnvironment.make()
    defer { try? FileManager.default.removeItem(at: folder) }
    let first = try await TestCertificate.make("first", in: folder)
    let second = try await TestCertificate.make("second", in: folder)
    let certificate = folder.appendingPathComponent("cert.pem")
    let key = folder.appendingPathComponent("key.pem")
    try first.copy(toCertificate: certificate, key: key)
    let server = try CLIProcess(
      [
        "server", "--port", "\(port)", "--tls-certificate", certificate.path, "--tls-key",
        key.path, "--log-level", "notice",
      ], environment: environment)
    defer { server.signal(SIGTERM) }

    func healthy(trusting root: TestCertificate) async throws -> Bool {
      let result = try await CLIEnvironment.run(
        program: "curl",
        [
          "-sS", "--max-time", "5", "--cacert", root.certificate.path,
          "https://127.0.0.1:\(port)/healthz",
        ], environment: environment)
      return result.status == 0 && result.out.contains("\"ok\"")
    }
    let started = try await eventually(timeout: .seconds(30), interval: .milliseconds(200)) {
      try await healthy(trusting: first)
    }
    #expect(started, "HTTPS with the first certificate: \(server.errors)")
    #expect(try await !healthy(trusting: second))

    try second.copy(toCertificate: certificate, key: key)
    server.signal(SIGHUP)
    let renewed = try await eventually(timeout: .seconds(10), interval: .milliseconds(200)) {
      try await healthy(trusting: second)
    }
    #expect(renewed, "the second certificate after SIGHUP: \(server.errors)")
    #expect(try await !healthy(trusting: first))
    #expect(server.errors.contains("TLS certificate reloaded"), "\(server.errors)")
  }

  @Test func aHangUpWithoutTLSEndsNothing() async throws {
    let (folder, environment, port) = try CLIEnvironment.make()
    defer { try? FileManager.default.removeItem(at: folder) }
    let server = try CLIProcess(
      ["server", "--port", "\(port)", "--log-level", "notice"], environment: environment)
    defer { server.signal(SIGTERM) }
    func healthy() async throws -> Bool {
      let result = try await CLIEnvironment.run(
        program: "curl", ["-sS", "--max-time", "5", "http://127.0.0.1:\(port)/healthz"],
        environment: environment)
      return result.status == 0 && result.out.contains("\"ok\"")
    }
    let started = try await eventually(timeout: .seconds(30), interval: .milliseconds(200)) {
      try await healthy()
    }
    #expect(started, "\(server.errors)")
    server.signal(SIGHUP)
    let noted = await server.until(timeout: .seconds(10)) {
      server.errors.contains("nothing to reload")
    }
    #expect(noted, "\(server.errors)")
    #expect(try await healthy(), "the server still answers after SIGHUP")
    #expect(await server.exitStatus(timeout: .milliseconds(10)) == nil)
  }

  @Test func aCertificateWithoutItsKeyIsRefused() async throws {
    let (folder, environment, _) = try CLIEnvironment.make()
    defer { try? FileManager.default.removeItem(at: folder) }
    let result = try await CLIEnvironment.run(
      ["server", "--tls-certificate", "/nonexistent.pem"], environment: environment)
    #expect(result.status == 64)
    #expect(result.err.contains("--tls-certificate and --tls-key go together"), "\(result.err)")
  }
}
