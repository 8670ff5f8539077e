import Foundation
import Logging
import NIOSSL
import PostgresNIO

/// What a `postgres://` URL says, and a first connection made as it says, so that a wrong
/// URL fails at start with words an operator can act on.
extension PostgresStorage {
  /// What a URL says: the client's configuration, the TLS it uses, the pool size for
  /// transactions (one more connection is allowed, for listening), and whether statements are
  /// prepared (`?prepared=off` says not: for a connection pooler in front of PostgreSQL that
  /// does not keep prepared statements, such as PgBouncer in transaction mode before 1.21).
  struct URLOptions {
    enum Endpoint: Equatable {
      case tcp(host: String, port: Int)
      case socket(path: String)
    }
    var endpoint: Endpoint
    var configuration: PostgresClient.Configuration
    var tls: PostgresTLSSetting
    var pool: Int
    var prepared: Bool
    /// Whether refresh reports are applied in one statement (`refresh=off` says not).
    var refresh = true
  }

  /// Reads a postgres:// URL; the password not in it comes from `environment` (`PGPASSWORD`,
  /// `PGPASSFILE`, `HOME`) or the password file, as ``PostgresPassword`` finds it.
  /// - Throws: ``SQLStorageError/badDatabaseURL(_:)`` naming what to change.
  static func options(from text: String, connections: Int, environment: [String: String])
    throws -> URLOptions
  {
    guard let url = URLComponents(string: text),
      url.scheme == "postgres" || url.scheme == "postgresql"
    else {
      throw SQLStorageError.badDatabaseURL(
        "'\(redacted(text))' is not a postgres:// URL (postgres://user@host:5432/database)")
    }
    let database = url.path.hasPrefix("/") ? String(url.path.dropFirst()) : url.path
    guard let user = url.user, !user.isEmpty, !database.isEmpty else {
      throw SQLStorageError.badDatabaseURL(
        "'\(redacted(text))' needs a user and a database: postgres://user@host/database")
    }
    func query(_ name: String) -> String? {
      url.queryItems?.first { $0.name == name }?.value
    }
    if query("password") != nil {
      throw SQLStorageError.badDatabaseURL(
        "'\(redacted(text))': a password in the query is not read; put it in PGPASSWORD or a "
          + "password file (?passfile=PATH, PGPASSFILE or ~/.pgpass)")
    }
    let port = url.port ?? 5432
    let modeText = query("sslmode") ?? PostgresSSLMode.disable.rawValue
    guard let mode = PostgresSSLMode(rawValue: modeText) else {
      throw SQLStorageError.badDatabaseURL(
        "'\(redacted(text))': sslmode must be one of "
          + PostgresSSLMode.allCases.map(\.rawValue).joined(separator: ", ")
          + " (it was '\(modeText)')")
    }
    var configuration: PostgresClient.Configuration
    let tls: PostgresTLSSetting
    let endpoint: URLOptions.Endpoint
    if let socket = query("host"), socket.hasPrefix("/") {
      let suffix = "/.s.PGSQL.\(port)"
      let folder = socket.hasSuffix(suffix) ? String(socket.dropLast(suffix.count)) : socket
      let password = try PostgresPassword.resolve(
        given: url.password, passfile: query("passfile"), environment: environment,
        host: folder, port: port, database: database, user: user)
      // As libpq: a Unix socket is not encrypted, whatever sslmode says.
      tls = .disable
      endpoint = .socket(path: folder + suffix)
      configuration = .init(
        unixSocketPath: folder + suffix, username: user, password: password, database: database)
    } else {
      guard let host = url.host, !host.isEmpty else {
        throw SQLStorageError.badDatabaseURL(
          "'\(redacted(text))' needs a host, or ?host=/path/to/socket-folder")
      }
      tls = try PostgresTLSSetting(mode: mode, rootCertificate: query("sslrootcert"))
      endpoint = .tcp(host: host, port: port)
      let password = try PostgresPassword.resolve(
        given: url.password, passfile: query("passfile"), environment: environment,
        host: host, port: port, database: database, user: user)
      configuration = .init(
        host: host, port: port, username: user, password: password, database: database,
        tls: tls.client)
    }
    var pool = max(connections, 1)
    if let given = query("connections") {
      guard let value = Int(given), (1...1000).contains(value) else {
        throw SQLStorageError.badDatabaseURL(
          "'\(redacted(text))': connections must be a number from 1 to 1000")
      }
      pool = value
    }
    var prepared = true
    if let given = query("prepared") {
      guard let value = ["on": true, "off": false][given] else {
        throw SQLStorageError.badDatabaseURL("'\(redacted(text))': prepared must be on or off")
      }
      prepared = value
    }
    var refresh = true
    if let given = query("refresh") {
      guard let value = ["on": true, "off": false][given] else {
        throw SQLStorageError.badDatabaseURL("'\(redacted(text))': refresh must be on or off")
      }
      refresh = value
    }
    configuration.options.maximumConnections = pool + 1
    configuration.options.minimumConnections = 0
    return URLOptions(
      endpoint: endpoint, configuration: configuration, tls: tls, pool: pool, prepared: prepared,
      refresh: refresh)
  }

  /// Opens and closes one connection as `options` say.
  /// - Throws: ``SQLStorageError/cannotConnect(_:)`` saying why it failed.
  static func probe(_ options: URLOptions, logger: Logger) async throws {
    let client = options.configuration
    var configuration: PostgresConnection.Configuration
    do {
      switch options.endpoint {
      case .tcp(let host, let port):
        let tls: PostgresConnection.Configuration.TLS =
          switch options.tls {
          case .disable: .disable
          case .prefer(let tls): .prefer(try NIOSSLContext(configuration: tls))
          case .require(let tls): .require(try NIOSSLContext(configuration: tls))
          }
        configuration = .init(
          host: host, port: port, username: client.username, password: client.password,
          database: client.database, tls: tls)
      case .socket(let path):
        configuration = .init(
          unixSocketPath: path, username: client.username, password: client.password,
          database: client.database)
      }
    } catch {
      throw SQLStorageError.cannotConnect("the TLS settings cannot be used: \(error)")
    }
    let connection: PostgresConnection
    do {
      connection = try await PostgresConnection.connect(
        configuration: configuration, id: 0, logger: logger)
    } catch {
      throw SQLStorageError.cannotConnect(reason(error))
    }
    try? await connection.close()
  }

  /// Why a connection failed, in words an operator can act on.
  static func reason(_ error: any Error) -> String {
    guard let error = error as? PSQLError else { return String(describing: error) }
    var parts = ["\(error.code)"]
    if let message = error.serverInfo?[.message] { parts.append(message) }
    if let state = error.serverInfo?[.sqlState] { parts.append("SQLSTATE \(state)") }
    if let underlying = error.underlying { parts.append(String(describing: underlying)) }
    var text = parts.joined(separator: ": ")
    if text.contains("CERTIFICATE_VERIFY_FAILED") {
      text +=
        " (the server's certificate is not signed by a CA of sslrootcert, or the "
        + "system's trust store without sslrootcert)"
    } else if text.contains("failedToValidateHostname") {
      text +=
        " (the server's certificate does not name the URL's host: connect by a name "
        + "it holds, or use sslmode=verify-ca)"
    } else if error.code == .sslUnsupported {
      text += " (the server does not accept TLS: turn on ssl in postgresql.conf, or lower sslmode)"
    }
    return text
  }

  /// The URL without its password (in the user part or a `password` query item), for logs. A
  /// password from `PGPASSWORD` or a password file is never in the URL.
  static func redacted(_ text: String) -> String {
    guard var url = URLComponents(string: text) else { return text }
    let queryHasPassword = url.queryItems?.contains { $0.name == "password" } ?? false
    guard url.password != nil || queryHasPassword else { return text }
    if url.password != nil { url.password = "***" }
    if queryHasPassword {
      url.queryItems = url.queryItems?.map {
        $0.name == "password" ? URLQueryItem(name: "password", value: "***") : $0
      }
    }
    return url.string ?? "postgres://…"
  }
}
