import Foundation
import NIOSSL
@testable import ServerStorage
import ServerTestSupport
import Testing
import TestSupport

/// What a postgres:// URL says about TLS (`sslmode`, `sslrootcert`) and where the password
/// comes from (the URL, `PGPASSWORD`, a `.pgpass` file), as libpq reads them.
@Suite("PostgreSQL connection options")
struct PostgresConnectionOptionsTests {
  static let base = "postgres://nearby@db.example:5432/nearby"

  static func options(_ url: String, environment: [String: String] = [:]) throws
    -> PostgresStorage.URLOptions
  {
    try PostgresStorage.options(from: url, connections: 4, environment: environment)
  }

  /// The `SQLStorageError/badDatabaseURL(_:)` text `body` throws, or nil.
  static func badURLText(_ body: () throws -> Void) -> String? {
    do {
      try body()
      return nil
    } catch SQLStorageError.badDatabaseURL(let text) {
      return text
    } catch {
      return "another error: \(error)"
    }
  }

  /// A throwaway folder for files a test writes.
  static func folder() throws -> URL {
    let folder = FileManager.default.temporaryDirectory
      .appendingPathComponent("nearby-pgopts-\(UUID().uuidString)")
    try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
    return folder
  }

  /// Writes `text` to a file in a new folder with the given mode.
  static func file(_ text: String, mode: Int = 0o600, name: String = "pgpass") throws -> String {
    let path = try folder().appendingPathComponent(name).path
    #expect(
      FileManager.default.createFile(
        atPath: path, contents: Data(text.utf8), attributes: [.posixPermissions: mode]))
    try FileManager.default.setAttributes([.posixPermissions: mode], ofItemAtPath: path)
    return path
  }

  /// A CA certificate that signed nothing the tests talk to (valid until 2126).
  static let unrelatedCA = """
    -----BEGIN CERTIFICATE-----
    MIIBtTCCAVugAwIBAgIUeVLWhE+68tbIfMStVMjYge36kmgwCgYIKoZIzj0EAwIw
    JzElMCMGA1UEAwwcTmVhcmJ5IHRlc3Q6IGFuIHVucmVsYXRlZCBDQTAgFw0yNjEx
    MjUxNTEzNThaGA8yMTI2MTEwMTE1MTM1OFowJzElMCMGA1UEAwwcTmVhcmJ5IHRl
    c3Q6IGFuIHVucmVsYXRlZCBDQTBZMBMGByqGSM49AgEGCCqGSM49AwEHA0IABBnt
    jEz39bxoDujJlkemHTr4ft8s6QXBZMiwQmbKtay2MnAcjoxh/dzrcGWi7PIv6cEb
    Lw30bUCIP3+s21p2A1qjYzBhMB0GA1UdDgQWBBQAX3UTYmMEeE/nJXOUs5AFKLar
    hzAfBgNVHSMEGDAWgBQAX3UTYmMEeE/nJXOUs5AFKLarhzAPBgNVHRMBAf8EBTAD
    AQH/MA4GA1UdDwEB/wQEAwIBBjAKBggqhkjOPQQDAgNIADBFAiAOc5ZI8kO40+Ee
    YYY77/GjunOZ75EpOKkIYxaM/Cu90gIhAPMdDQxABrWMD9w5MQnvA39DGsK7m29a
    HTwClJRSt3iq
    -----END CERTIFICATE-----

    """

  // MARK: sslmode and sslrootcert

  /// Each mode's TLS: whether it is required, and what of the certificate is checked.
  @Test(
    arguments: [
      ("", "disable", nil),
      ("?sslmode=disable", "disable", nil),
      ("?sslmode=allow", "prefer", CertificateVerification.none),
      ("?sslmode=prefer", "prefer", CertificateVerification.none),
      ("?sslmode=require", "require", CertificateVerification.none),
      ("?sslmode=verify-ca", "require", CertificateVerification.noHostnameVerification),
      ("?sslmode=verify-full", "require", CertificateVerification.fullVerification),
    ] as [(String, String, CertificateVerification?)])
  func sslmodeChoosesTheTLSSetting(
    query: String, kind: String, verification: CertificateVerification?
  ) throws {
    let tls = try Self.options(Self.base + query).tls
    switch tls {
    case .disable: #expect(kind == "disable")
    case .prefer: #expect(kind == "prefer")
    case .require: #expect(kind == "require")
    }
    #expect(tls.configuration?.certificateVerification == verification)
    if verification != nil {
      // Without sslrootcert, the system's trust store.
      #expect(tls.configuration?.trustRoots == .default)
    }
  }

  /// sslrootcert's certificates are the only roots; as in libpq, a root file makes `require`
  /// (and `prefer`) check the chain too, and `system` is the system's store for verify-full.
  @Test func sslrootcertIsTheTrustRoot() throws {
    let ca = try Self.file(Self.unrelatedCA, mode: 0o644, name: "ca.crt")
    let expected = try NIOSSLCertificate.fromPEMFile(ca)
    for (mode, verification) in [
      ("verify-full", CertificateVerification.fullVerification),
      ("verify-ca", .noHostnameVerification), ("require", .noHostnameVerification),
      ("prefer", .noHostnameVerification),
    ] {
      let tls = try Self.options(Self.base + "?sslmode=\(mode)&sslrootcert=\(ca)").tls
      #expect(tls.configuration?.trustRoots == .certificates(expected), "\(mode)")
      #expect(tls.configuration?.certificateVerification == verification, "\(mode)")
    }
    let system = try Self.options(Self.base + "?sslmode=verify-full&sslrootcert=system").tls
    #expect(system.configuration?.trustRoots == .default)
    #expect(system.configuration?.certificateVerification == .fullVerification)
  }

  /// A Unix socket is never encrypted, whatever sslmode says (libpq's rule), and a bad
  /// sslrootcert there is not read.
  @Test func unixSocketsIgnoreTLS() throws {
    let options = try Self.options(
      "postgres://nearby@/nearby?host=/run/postgresql&sslmode=verify-full&sslrootcert=/nope")
    #expect(options.endpoint == .socket(path: "/run/postgresql/.s.PGSQL.5432"))
    guard case .disable = options.tls else {
      Issue.record("a Unix socket got TLS")
      return
    }
  }

  /// Unknown modes, missing or empty root files and `system` with a weak mode are refused,
  /// each naming what works.
  @Test func badTLSOptionsNameTheFix() throws {
    let unknown = Self.badURLText { _ = try Self.options(Self.base + "?sslmode=verify_full") }
    #expect(unknown?.contains("sslmode must be one of disable, allow, prefer") == true)
    #expect(unknown?.contains("verify-full") == true)
    #expect(unknown?.contains("'verify_full'") == true)

    let missing = Self.badURLText {
      _ = try Self.options(Self.base + "?sslmode=verify-full&sslrootcert=/no/such/ca.crt")
    }
    #expect(missing?.contains("sslrootcert file /no/such/ca.crt does not exist") == true)

    let notPEM = try Self.file("not a certificate\n", mode: 0o644, name: "ca.crt")
    let empty = Self.badURLText {
      _ = try Self.options(Self.base + "?sslmode=verify-ca&sslrootcert=\(notPEM)")
    }
    #expect(empty?.contains("sslrootcert file \(notPEM)") == true)

    let weak = Self.badURLText {
      _ = try Self.options(Self.base + "?sslmode=require&sslrootcert=system")
    }
    #expect(weak?.contains("sslrootcert=system needs sslmode=verify-full") == true)
  }

  /// `refresh=off` runs every report through the engine; on by default; another value is
  /// refused with the fix. libpq's tools get the URL without it.
  @Test func refreshReportsCanBeTurnedOff() throws {
    #expect(try Self.options(Self.base).refresh)
    #expect(try Self.options(Self.base + "?refresh=on").refresh)
    #expect(try !Self.options(Self.base + "?refresh=off").refresh)
    let bad = Self.badURLText { _ = try Self.options(Self.base + "?refresh=maybe") }
    #expect(bad?.contains("refresh must be on or off") == true)
    #expect(
      PostgresStorage.nearbyQueryItems.isSuperset(of: ["connections", "prepared", "refresh"]))
  }

  // MARK: passwords

  /// libpq's `.pgpass` format: the first matching line wins, `*` alone matches anything,
  /// `\:` and `\\` escape, `\*` is a literal star, `#` starts a comment line, and a line
  /// with fewer than five fields is skipped.
  @Test func passfileLinesMatchAsLibpq() {
    let text = """
      # host:port:database:user:password
      db.example:5432:nearby:nearby
      other:5432:nearby:nearby:not-this-host
      db.example:5433:*:nearby:not-this-port
      db.example:*:nearby:nearby:first\\:match\\\\x:ignored
      *:*:*:nearby:later-line
      \\*:*:*:star:literal-star
      ::1:*:*:v6:unescaped-colons-never-match
      \\:\\:1:*:*:v6:escaped-v6
      *:*:*:*:anyone\r
      """
    func lookUp(_ host: String, _ port: Int, _ database: String, _ user: String) -> String? {
      PostgresPassword.lookUp(in: text, host: host, port: port, database: database, user: user)
    }
    #expect(lookUp("db.example", 5432, "nearby", "nearby") == "first:match\\x")
    #expect(lookUp("db.example", 5433, "other", "nearby") == "not-this-port")
    #expect(lookUp("elsewhere", 1, "x", "nearby") == "later-line")
    #expect(lookUp("*", 5432, "x", "star") == "literal-star")
    #expect(lookUp("db.example", 5432, "x", "star") == "anyone")
    #expect(lookUp("::1", 5432, "x", "v6") == "escaped-v6")
    #expect(lookUp("h", 1, "d", "someone") == "anyone")
    #expect(lookUp("# host", 5432, "database", "user") == "anyone")
    #expect(
      PostgresPassword.lookUp(
        in: "# only a comment\n", host: "h", port: 1, database: "d", user: "u") == nil)
  }

  /// A password file open to its group or others is refused, naming the chmod; a missing one
  /// is no password, not an error.
  @Test func passfileOpenToOthersIsRefused() throws {
    let open = try Self.file("*:*:*:*:secret\n", mode: 0o644)
    let refused = Self.badURLText { _ = try PostgresPassword.readPasswordFile(open) }
    #expect(refused?.contains("mode 644") == true)
    #expect(refused?.contains("chmod 600 \(open)") == true)
    #expect(refused?.contains("secret") == false)
    let groupReadable = try Self.file("*:*:*:*:secret\n", mode: 0o640)
    #expect(Self.badURLText { _ = try PostgresPassword.readPasswordFile(groupReadable) } != nil)

    let closed = try Self.file("*:*:*:*:secret\n", mode: 0o600)
    #expect(try PostgresPassword.readPasswordFile(closed) == "*:*:*:*:secret\n")
    #expect(try PostgresPassword.readPasswordFile(closed + ".missing") == nil)
    // Through the URL, too: the open file stops the connection before it is made.
    let viaURL = Self.badURLText { _ = try Self.options(Self.base + "?passfile=\(open)") }
    #expect(viaURL?.contains("chmod 600") == true)
  }

  /// libpq's order: the URL's password, else PGPASSWORD (when not empty), else the password
  /// file: `?passfile=`, else PGPASSFILE, else $HOME/.pgpass.
  @Test func passwordPrecedenceIsLibpqs() throws {
    let fromParameter = try Self.file("db.example:5432:nearby:nearby:from-parameter\n")
    let fromVariable = try Self.file("*:*:*:*:from-pgpassfile\n")
    let home = try Self.folder()
    let homeFile = home.appendingPathComponent(".pgpass").path
    #expect(
      FileManager.default.createFile(
        atPath: homeFile, contents: Data("*:*:*:*:from-home\n".utf8),
        attributes: [.posixPermissions: 0o600]))
    let everything = [
      "PGPASSWORD": "from-environment", "PGPASSFILE": fromVariable, "HOME": home.path,
    ]
    func password(_ url: String, _ environment: [String: String]) throws -> String? {
      try Self.options(url, environment: environment).configuration.password
    }
    let withPassfile = Self.base + "?passfile=\(fromParameter)"
    let inURL = "postgres://nearby:from-url@db.example:5432/nearby?passfile=\(fromParameter)"
    #expect(try password(inURL, everything) == "from-url")
    #expect(try password(withPassfile, everything) == "from-environment")
    var noVariable = everything
    noVariable["PGPASSWORD"] = ""
    #expect(try password(withPassfile, noVariable) == "from-parameter")
    #expect(try password(Self.base, noVariable) == "from-pgpassfile")
    noVariable["PGPASSFILE"] = nil
    #expect(try password(Self.base, noVariable) == "from-home")
    #expect(try password(Self.base, [:]) == nil)
    // A password file matches the socket folder as the host of a Unix-socket URL.
    let socketFile = try Self.file("/run/postgresql:5432:nearby:nearby:over-the-socket\n")
    #expect(
      try password(
        "postgres://nearby@/nearby?host=/run/postgresql&passfile=\(socketFile)", [:])
        == "over-the-socket")
  }

  /// The description (logs, errors) never holds a password, wherever it came from, and a
  /// password in the query is refused rather than read.
  @Test func descriptionsHoldNoPassword() throws {
    let url = "postgres://nearby:hunter2@db.example/nearby?sslmode=require"
    #expect(!PostgresStorage.redacted(url).contains("hunter2"))
    #expect(
      StorageLocation(url).description == "postgres://nearby:***@db.example/nearby?sslmode=require")
    let inQuery = Self.base + "?password=hunter2"
    #expect(!PostgresStorage.redacted(inQuery).contains("hunter2"))
    let refused = Self.badURLText { _ = try Self.options(inQuery) }
    #expect(refused?.contains("PGPASSWORD") == true)
    #expect(refused?.contains("hunter2") == false)
  }

  // MARK: against the test server

  /// The test server's URL for a fresh database, with `host` and `query`.
  static func url(
    host: String = "127.0.0.1", database: String? = nil, user: String? = nil,
    query: String
  ) async throws -> (url: String, port: Int) {
    let fresh = try await TestPostgres.freshDatabase()
    guard var components = URLComponents(string: fresh) else {
      throw FixtureError("bad test database URL \(fresh)")
    }
    components.host = host
    if let database { components.path = "/" + database }
    if let user { components.user = user }
    guard let url = components.string else { throw FixtureError("cannot build a URL") }
    return (url + query, components.port ?? 5432)
  }

  /// Whether the storage's connections are encrypted, as the server sees them.
  static func encrypted(_ storage: PostgresStorage) async throws -> Bool {
    try await storage.read { store in
      try store.sql.queryFirst(
        "SELECT CASE WHEN ssl THEN 1 ELSE 0 END::bigint FROM pg_stat_ssl "
          + "WHERE pid = pg_backend_pid()", [])?.integer(0) == 1
    }
  }

  /// verify-full against the test server's CA connects, by IP address and by name (the
  /// certificate holds both), and the server sees the connection encrypted; the same
  /// database without sslmode is not.
  @Test(.requires(.postgres), arguments: ["127.0.0.1", "localhost"])
  func verifyFullConnectsEncrypted(host: String) async throws {
    let ca = try TestPostgres.certificateAuthority()
    let (url, _) = try await Self.url(
      host: host, query: "?sslmode=verify-full&sslrootcert=\(ca)")
    let storage = try await PostgresStorage(url: url, environment: [:])
    try await withShutdown(storage) { storage in
      #expect(try await Self.encrypted(storage))

      let plainURL = String(url.prefix { $0 != "?" })
      let plain = try await PostgresStorage(url: plainURL, environment: [:])
      try await withShutdown(plain) { plain in
        let encrypted = try await Self.encrypted(plain)
        #expect(!encrypted)
      }
    }
  }

  /// require encrypts without checking the certificate (libpq's meaning).
  @Test(.requires(.postgres)) func requireEncryptsWithoutACertificate() async throws {
    _ = try TestPostgres.certificateAuthority()  // the server must have TLS
    let (url, _) = try await Self.url(query: "?sslmode=require")
    let storage = try await PostgresStorage(url: url, environment: [:])
    try await withShutdown(storage) { storage in
      let encrypted = try await Self.encrypted(storage)
      #expect(encrypted)
    }
  }

  /// verify-full and verify-ca with a CA that did not sign the server's certificate fail at
  /// once, saying the certificate is not trusted.
  @Test(.requires(.postgres), arguments: ["verify-full", "verify-ca"])
  func anotherCAIsRefused(mode: String) async throws {
    _ = try TestPostgres.certificateAuthority()
    let ca = try Self.file(Self.unrelatedCA, mode: 0o644, name: "ca.crt")
    let (url, _) = try await Self.url(query: "?sslmode=\(mode)&sslrootcert=\(ca)")
    do {
      let storage = try await PostgresStorage(url: url, environment: [:])
      await storage.shutdown()
      Issue.record("connected with a CA that signed nothing")
    } catch SQLStorageError.cannotConnect(let why) {
      #expect(why.contains("CERTIFICATE_VERIFY_FAILED"), "\(why)")
      #expect(why.contains("sslrootcert"), "\(why)")
    }
  }

  /// A role that must log in with a password (scram-sha-256) connects with the password from
  /// a password file, and not with a wrong one: the password is sent, and the server checks it.
  @Test(.requires(.postgres)) func thePasswordFromAPassfileIsSent() async throws {
    let group = try TestPostgres.passwordGroup()
    let suffix = UUID().uuidString.lowercased().replacingOccurrences(of: "-", with: "")
    let (role, password) = ("p_\(suffix)", "pw-\(UUID().uuidString)")
    let (base, port) = try await Self.url(query: "")
    let database = String(base.split(separator: "/").last ?? "")
    try await TestPostgres.execute(
      "CREATE ROLE \(role) LOGIN PASSWORD '\(password)' IN ROLE \(group)")
    try await TestPostgres.execute("ALTER DATABASE \(database) OWNER TO \(role)")
    let url = try await Self.url(database: database, user: role, query: "").url

    let right = try Self.file("127.0.0.1:\(port):\(database):\(role):\(password)\n")
    let storage = try await PostgresStorage(url: url + "?passfile=\(right)", environment: [:])
    #expect(!storage.description.contains(password))
    #expect(
      try await storage.read { try $0.sql.queryFirst("SELECT current_user", [])?.text(0) } == role)
    await storage.shutdown()

    let wrong = try Self.file("127.0.0.1:\(port):\(database):\(role):not-\(password)\n")
    do {
      let storage = try await PostgresStorage(url: url + "?passfile=\(wrong)", environment: [:])
      await storage.shutdown()
      Issue.record("connected with a wrong password")
    } catch SQLStorageError.cannotConnect(let why) {
      #expect(why.contains("password authentication failed"), "\(why)")
      #expect(!why.contains(password))
    }
    // And from PGPASSWORD, which comes before the file.
    let fromEnvironment = try await PostgresStorage(
      url: url + "?passfile=\(wrong)", environment: ["PGPASSWORD": password])
    await fromEnvironment.shutdown()
  }
}
