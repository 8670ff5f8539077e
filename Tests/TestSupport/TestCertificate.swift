public import Foundation

/// A self-signed P-256 certificate for 127.0.0.1 and its key, as PEM files (made by openssl,
/// as an operator's LAN CA would): for the tests of the server over HTTPS.
public struct TestCertificate: Sendable {
  public var certificate: URL
  public var key: URL

  /// Makes `NAME.pem` and `NAME.key` in `folder`.
  /// - Throws: when openssl is missing or fails (the server tests' packages install it).
  public static func make(_ name: String, in folder: URL) async throws -> TestCertificate {
    let pair = TestCertificate(
      certificate: folder.appendingPathComponent("\(name).pem"),
      key: folder.appendingPathComponent("\(name).key"))
    let result = try await ChildProcess.run(
      URL(fileURLWithPath: "/usr/bin/env"),
      [
        "openssl", "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1",
        "-nodes", "-keyout", pair.key.path, "-out", pair.certificate.path, "-days", "2",
        "-subj", "/CN=nearby-\(name)", "-addext", "subjectAltName=IP:127.0.0.1",
      ], timeout: 60)
    guard result.status == 0 else {
      throw TestCertificateError(
        description: "openssl req failed (\(result.status)); is openssl installed? "
          + String(decoding: result.err, as: UTF8.self))
    }
    return pair
  }

  /// Writes this pair's files over `certificate` and `key` (a renewal in place).
  public func copy(toCertificate certificate: URL, key: URL) throws {
    try Data(contentsOf: self.certificate).write(to: certificate)
    try Data(contentsOf: self.key).write(to: key)
  }
}

public struct TestCertificateError: Error, CustomStringConvertible {
  public var description: String
}
