import Foundation
import NIOSSL
import PostgresNIO

/// libpq's `sslmode`: whether a connection is encrypted, and what of the server's certificate
/// is checked.
///
/// Unlike libpq, whose default is `prefer`, a URL without `sslmode` does not use TLS
/// (``disable``), as before `sslmode` was read. Connections over a Unix socket never use TLS.
enum PostgresSSLMode: String, CaseIterable, Sendable {
  /// No TLS.
  case disable
  /// TLS when the server offers it. libpq tries without TLS first; PostgresNIO cannot, so this
  /// is ``prefer``.
  case allow
  /// TLS when the server offers it, else an unencrypted connection; the certificate is not
  /// checked (unless `sslrootcert` names a file, as in libpq).
  case prefer
  /// TLS or no connection; the certificate is not checked (unless `sslrootcert` names a file,
  /// as in libpq), so this protects against listeners, not against an impostor.
  case require
  /// TLS, with the server's certificate chain checked against `sslrootcert` (or the system's
  /// trust store), not its name.
  case verifyCA = "verify-ca"
  /// TLS, with the chain checked as ``verifyCA`` and the certificate naming the URL's host
  /// (a DNS name, or an IP address in its subjectAltName).
  case verifyFull = "verify-full"
}

/// The TLS a connection uses: what PostgresNIO's `PostgresClient.Configuration.TLS` holds, in a
/// form tests can look at.
enum PostgresTLSSetting: Sendable {
  case disable
  case prefer(TLSConfiguration)
  case require(TLSConfiguration)

  /// PostgresNIO's setting.
  var client: PostgresClient.Configuration.TLS {
    switch self {
    case .disable: .disable
    case .prefer(let configuration): .prefer(configuration)
    case .require(let configuration): .require(configuration)
    }
  }

  /// The TLS configuration, nil for ``disable``.
  var configuration: TLSConfiguration? {
    switch self {
    case .disable: nil
    case .prefer(let configuration), .require(let configuration): configuration
    }
  }

  /// The setting for `mode`, with the certificates of `rootCertificate` (libpq's `sslrootcert`:
  /// a PEM file of CA certificates, or `system` for the system's trust store) as the roots.
  /// - Throws: ``SQLStorageError/badDatabaseURL(_:)`` when the file is missing or holds no
  ///   certificate, or `system` comes with a mode weaker than `verify-full` (as libpq).
  init(mode: PostgresSSLMode, rootCertificate: String?) throws {
    guard mode != .disable else {
      self = .disable
      return
    }
    var configuration = TLSConfiguration.makeClientConfiguration()
    var checksChain = mode == .verifyCA || mode == .verifyFull
    switch rootCertificate {
    case nil:
      configuration.trustRoots = .default
    case "system":
      guard mode == .verifyFull else {
        throw SQLStorageError.badDatabaseURL(
          "sslrootcert=system needs sslmode=verify-full (it was \(mode.rawValue)), as in libpq")
      }
      configuration.trustRoots = .default
    case let path?:
      configuration.trustRoots = .certificates(try Self.certificates(at: path))
      // libpq checks the chain in every mode once it has a root certificate file.
      checksChain = true
    }
    configuration.certificateVerification =
      mode == .verifyFull ? .fullVerification : checksChain ? .noHostnameVerification : .none
    self = mode == .allow || mode == .prefer ? .prefer(configuration) : .require(configuration)
  }

  private static func certificates(at path: String) throws -> [NIOSSLCertificate] {
    guard FileManager.default.fileExists(atPath: path) else {
      throw SQLStorageError.badDatabaseURL(
        "sslrootcert file \(path) does not exist: name a PEM file of the CA certificates that "
          + "signed the server's certificate, or drop sslrootcert to use the system's")
    }
    let certificates: [NIOSSLCertificate]
    do {
      certificates = try NIOSSLCertificate.fromPEMFile(path)
    } catch {
      throw SQLStorageError.badDatabaseURL(
        "cannot read sslrootcert file \(path) (\(error)): it must be PEM CA certificates")
    }
    guard !certificates.isEmpty else {
      throw SQLStorageError.badDatabaseURL(
        "sslrootcert file \(path) holds no PEM certificate (-----BEGIN CERTIFICATE-----)")
    }
    return certificates
  }
}

/// The password of a connection when the URL has none, found as libpq finds it: the
/// `PGPASSWORD` environment variable, else the first matching line of the password file
/// (`?passfile=PATH`, else `PGPASSFILE`, else `~/.pgpass`).
enum PostgresPassword {
  /// The password for a connection: `given` (the URL's), else `PGPASSWORD` (when not empty),
  /// else the password file's line for `host`, `port`, `database` and `user`.
  /// - Parameters:
  ///   - passfile: the URL's `passfile`; when nil, `PGPASSFILE` or `$HOME/.pgpass`.
  ///   - host: the URL's host, or the socket folder for a Unix socket.
  /// - Throws: ``SQLStorageError/badDatabaseURL(_:)`` when the password file is readable or
  ///   writable by its group or others (libpq ignores it then; here it is an error naming the
  ///   `chmod`), is not a regular file, or cannot be read. A missing file is no error.
  static func resolve(
    given: String?, passfile: String?, environment: [String: String], host: String, port: Int,
    database: String, user: String
  ) throws -> String? {
    if let given { return given }
    if let password = environment["PGPASSWORD"], !password.isEmpty { return password }
    let path: String
    if let passfile, !passfile.isEmpty {
      path = passfile
    } else if let file = environment["PGPASSFILE"], !file.isEmpty {
      path = file
    } else if let home = environment["HOME"], !home.isEmpty {
      path = (home as NSString).appendingPathComponent(".pgpass")
    } else {
      return nil
    }
    guard let text = try readPasswordFile(path) else { return nil }
    return lookUp(in: text, host: host, port: port, database: database, user: user)
  }

  /// The password file's text, or nil when there is no file at `path`.
  /// - Throws: ``SQLStorageError/badDatabaseURL(_:)`` when the file is open to its group or
  ///   others, is not a regular file, or cannot be read.
  static func readPasswordFile(_ path: String) throws -> String? {
    let resolved = URL(fileURLWithPath: path).resolvingSymlinksInPath().path
    guard FileManager.default.fileExists(atPath: resolved) else { return nil }
    let attributes: [FileAttributeKey: Any]
    do {
      attributes = try FileManager.default.attributesOfItem(atPath: resolved)
    } catch {
      throw SQLStorageError.badDatabaseURL("cannot read the password file \(path): \(error)")
    }
    guard attributes[.type] as? FileAttributeType == .typeRegular else {
      throw SQLStorageError.badDatabaseURL("the password file \(path) is not a regular file")
    }
    let permissions = (attributes[.posixPermissions] as? NSNumber)?.intValue ?? 0o777
    guard permissions & 0o077 == 0 else {
      throw SQLStorageError.badDatabaseURL(
        "the password file \(path) has mode \(String(permissions, radix: 8)), open to its group "
          + "or others; PostgreSQL's rule is u=rw at most: chmod 600 \(path)")
    }
    guard let data = FileManager.default.contents(atPath: resolved),
      let text = String(data: data, encoding: .utf8)
    else {
      throw SQLStorageError.badDatabaseURL("cannot read the password file \(path) as UTF-8 text")
    }
    return text
  }

  /// The password of the first line of a password file (libpq's `.pgpass` format:
  /// `host:port:database:user:password`) that matches; `*` alone matches any value, `\:` and
  /// `\\` stand for `:` and `\`, and lines starting with `#` are comments.
  static func lookUp(in text: String, host: String, port: Int, database: String, user: String)
    -> String?
  {
    let wanted = [host, String(port), database, user]
    for line in text.split(omittingEmptySubsequences: true, whereSeparator: \.isNewline) {
      if line.hasPrefix("#") { continue }
      let fields = Self.fields(of: line)
      guard fields.count >= 5 else { continue }
      let matches = zip(fields.prefix(4), wanted).allSatisfy { field, value in
        (field.text == "*" && !field.escaped) || field.text == value
      }
      if matches { return fields[4].text }
    }
    return nil
  }

  /// A line's colon-separated fields, unescaped; `escaped` says whether the field used `\`
  /// (so that `\*` is a literal star, not the wildcard).
  private static func fields(of line: Substring) -> [(text: String, escaped: Bool)] {
    var fields: [(text: String, escaped: Bool)] = []
    var current = ""
    var escaped = false
    var iterator = line.makeIterator()
    while let character = iterator.next() {
      switch character {
      case "\\":
        escaped = true
        if let next = iterator.next() { current.append(next) }
      case ":":
        fields.append((current, escaped))
        current = ""
        escaped = false
      default:
        current.append(character)
      }
    }
    fields.append((current, escaped))
    return fields
  }
}
