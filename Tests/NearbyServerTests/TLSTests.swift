import AsyncHTTPClient
import Foundation
import NIOCore
import NIOSSL
import NearbyServer
import Testing
import TestSupport

/// The server over HTTPS with a certificate and key from PEM files (what phones need for the
/// page's microphone), re-read on reload (a renewal) without a restart; files that cannot be
/// served are refused at start, naming the file, and a failed reload keeps the pair served.
@Suite("HTTPS")
struct TLSTests {
  @Test func itServesHTTPSAndTakesARenewedCertificate() async throws {
    let folder = try Self.folder()
    defer { try? FileManager.default.removeItem(at: folder) }
    let first = try await TestCertificate.make("first", in: folder)
    let second = try await TestCertificate.make("second", in: folder)
    let served = (
      folder.appendingPathComponent("cert.pem"), folder.appendingPathComponent("key.pem")
    )
    try first.copy(toCertificate: served.0, key: served.1)
    let certificates = try ServerCertificates(
      certificatePath: served.0.path, keyPath: served.1.path)
    let server = try await ServerHarness.start { $0.tls = certificates }
    try await withShutdown(server) { server in
      let port = try #require(server.url.port)
      #expect(try await Self.health(port: port, trusting: first.certificate) == 200)
      #expect(try await Self.health(port: port, trusting: second.certificate) == nil)

      try second.copy(toCertificate: served.0, key: served.1)
      try certificates.reload()
      #expect(try await Self.health(port: port, trusting: second.certificate) == 200)
      #expect(try await Self.health(port: port, trusting: first.certificate) == nil)

      // A renewal caught half-written: the reload says so and the server keeps its pair.
      try Data("-----BEGIN CERTIFICATE-----\ntruncated".utf8).write(to: served.0)
      #expect(throws: ServerCertificatesError.self) { try certificates.reload() }
      #expect(try await Self.health(port: port, trusting: second.certificate) == 200)
    }
  }

  @Test func filesThatCannotBeServedAreNamed() async throws {
    let folder = try Self.folder()
    defer { try? FileManager.default.removeItem(at: folder) }
    let first = try await TestCertificate.make("first", in: folder)
    let second = try await TestCertificate.make("second", in: folder)
    do {
      _ = try ServerCertificates(certificatePath: first.certificate.path, keyPath: second.key.path)
      Issue.record("a key that is not the certificate's was taken")
    } catch {
      #expect("\(error)".contains(second.key.path), "\(error)")
      #expect("\(error)".contains("is not the key of the certificate"), "\(error)")
    }
    let missing = folder.appendingPathComponent("none.pem").path
    do {
      _ = try ServerCertificates(certificatePath: missing, keyPath: first.key.path)
      Issue.record("a missing file was taken")
    } catch {
      #expect("\(error)".contains("cannot read \(missing)"), "\(error)")
    }
  }

  // MARK: Helpers

  static func folder() throws -> URL {
    let folder = FileManager.default.temporaryDirectory.appendingPathComponent(
      "nearby-tls-\(UUID().uuidString)")
    try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
    return folder
  }

  /// `/healthz` over HTTPS trusting only `root`: its status, or nil when the handshake failed
  /// (the client retries a failed handshake until the request's deadline: a short one).
  static func health(port: Int, trusting root: URL) async throws -> Int? {
    var tls = TLSConfiguration.makeClientConfiguration()
    tls.trustRoots = .certificates(try NIOSSLCertificate.fromPEMFile(root.path))
    let client = HTTPClient(
      eventLoopGroup: HTTPClient.defaultEventLoopGroup,
      configuration: .init(tlsConfiguration: tls))
    defer { _ = client.shutdown() }
    do {
      let response = try await client.execute(
        HTTPClientRequest(url: "https://127.0.0.1:\(port)/healthz"), timeout: .seconds(3))
      _ = try await response.body.collect(upTo: 1 << 16)
      return Int(response.status.code)
    } catch {
      return nil
    }
  }
}
