import CommandLineSupport
import ArgumentParser
import Foundation
import LANMulticast
import Logging
import NearbyServer
import Resolution
@_spi(Resolver) import ResolverWire
import ServerStorage
import ServiceLifecycle
import UnixSignals

@main
struct NearbyServerTool: AsyncParsableCommand {
  static let configuration = CommandConfiguration(
    commandName: "nearby-server",
    abstract: "The resolver server of Nearby for Linux, and its API keys.",
    discussion: """
      With no arguments it serves the API on 127.0.0.1:7171 with a SQLite file under \
      $XDG_DATA_HOME/nearby/ (nothing to set up). On first start with no API keys it creates \
      an admin key for project "default" and writes it to $XDG_CONFIG_HOME/nearby/server-api-key \
      (or --bootstrap-key-file). Settings may also come from a file (--config; as root \
      /etc/nearby/server.conf, which the Debian package's service reads).
      SIGTERM or SIGINT stops it gracefully. `nearby server …` runs this tool.

      Examples:
        nearby-server
        nearby-server --host 0.0.0.0 --port 8080 --database postgres://nearby@db/nearby
        nearby-server keys create --project cafe --role client --label kiosk
      """,
    version: NearbyVersion.current,
    subcommands: [ServeCommand.self, KeysCommand.self],
    defaultSubcommand: ServeCommand.self)

  /// Reads the settings file (``ServerArguments``) into the arguments, then parses and runs as
  /// ArgumentParser's `main` does. A parse error after settings were read also names the file.
  static func main() async {
    let expanded: (arguments: [String], file: SettingsFile?)
    do {
      expanded = try ServerArguments.expand(
        Array(CommandLine.arguments.dropFirst()), isRoot: getuid() == 0)
    } catch {
      exit(withError: CommandFailure("\(error)"))
    }
    let command: any ParsableCommand
    do {
      command = try await asyncParseAsRoot(expanded.arguments)
    } catch {
      if let file = expanded.file, exitCode(for: error) != .success {
        StandardStreams.error(
          "(options read from \(file.path): \(file.arguments().joined(separator: " ")))\n")
      }
      exit(withError: error)
    }
    do {
      if var asyncCommand = command as? any AsyncParsableCommand {
        try await asyncCommand.run()
      } else {
        var command = command
        try command.run()
      }
    } catch {
      exit(withError: error)
    }
  }
}

/// `--database`, shared by the server and its key commands.
struct DatabaseOptions: ParsableArguments {
  @Option(
    name: .long,
    help: ArgumentHelp(
      """
      postgres://user@host[:port]/database[?options], or a SQLite file path \
      (default: $XDG_DATA_HOME/nearby/resolver.sqlite)
      """,
      discussion: """
        PostgreSQL options, joined with &: sslmode=disable (the default: not encrypted), \
        prefer, require (encrypted, certificate not checked), verify-ca or verify-full \
        (certificate checked against sslrootcert, and its host name by verify-full); \
        sslrootcert=FILE (PEM CA certificates; default: the system's); passfile=PATH; \
        connections=N; prepared=off; refresh=off. Keep the password off the command line: it is read, \
        as libpq does, from PGPASSWORD or a password file (passfile, $PGPASSFILE or \
        ~/.pgpass: host:port:database:user:password lines, mode 0600).
        """))
  var database: String?

  @Option(
    name: .long,
    help: ArgumentHelp(
      "A settings file: one option a line, `name = value` (default: none, or as root /etc/nearby/server.conf if it exists).",
      discussion: """
        Names are the long options without --; `true` sets a flag. Options given on the \
        command line win. The keys commands read only `database` from it.
        """))
  var config: String?  // read before parsing, by ServerArguments

  @Flag(name: .long, help: "Read no settings file, not even /etc/nearby/server.conf.")
  var noConfig = false  // read before parsing, by ServerArguments

  var location: StorageLocation { StorageLocation(database) }
}

struct ServeCommand: AsyncParsableCommand {
  static let configuration = CommandConfiguration(
    commandName: "serve", abstract: "Serve the resolver API (the default).")

  @OptionGroup var database: DatabaseOptions

  @Option(name: .long, help: "The address to listen on (0.0.0.0 for every interface).")
  var host = "127.0.0.1"

  @Option(name: .long, help: "The TCP port.")
  var port = LocalServer.defaultPort

  @Option(name: .long, help: "Seconds without a sighting before a message is lost (0.1–86400).")
  var lostAfter: Double = 10

  @Option(
    name: .long,
    help: """
      Seconds a device transmits a token before it gets the next (1–900): a token recorded \
      and played back resolves until then, plus 10 s.
      """)
  var tokenLifetime: Double = 120  // ResolutionConfiguration's default

  @Option(
    name: .long,
    help: """
      Days without a report after which a device is removed with its handles (0: never).
      """)
  var deviceExpiryDays: Double = 30

  @Option(name: .long, help: "Log level: trace, debug, info, notice, warning, error, critical.")
  var logLevel = "info"

  @Option(
    name: .long,
    help: """
      Where the first start writes the admin key it makes, mode 0600 (default: \
      $XDG_CONFIG_HOME/nearby/server-api-key, where `nearby` looks for it).
      """)
  var bootstrapKeyFile: String?

  @Option(name: .long, help: "Requests a second per API key on average (over it: 429).")
  var requestsPerSecond: Double = ResolverServerConfiguration().requestsPerSecond

  @Option(name: .long, help: "Requests per API key allowed in a burst above the average.")
  var burst: Double = ResolverServerConfiguration().burst

  @Option(name: .long, help: "Requests a second per device on average (bursts of twice that).")
  var requestsPerSecondPerDevice = ResolverServerConfiguration().requestsPerSecondPerDevice

  @Option(
    name: .long,
    help: "Requests a second per client address on average (bursts of twice that).")
  var requestsPerSecondPerAddress = ResolverServerConfiguration().requestsPerSecondPerAddress

  @Option(
    name: .long,
    help: """
      A reverse proxy's address (repeat for several): for its requests the client's address \
      is taken from X-Forwarded-For.
      """)
  var trustedProxy: [String] = []

  @Option(
    name: .long,
    help: "Connections open at once; past it new ones wait (raise the open-file limit with it).")
  var maxConnections = ResolverServerConfiguration().maximumConnections

  @Option(
    name: .long,
    help: """
      Connections open at once from one client address (a trusted proxy's are not counted); \
      past it a new one is closed at once. Raise it for sites behind one NAT.
      """)
  var maxConnectionsPerAddress = ResolverServerConfiguration().maximumConnectionsPerAddress

  @Option(
    name: .long, help: "Device event streams open at once with one API key (past it: 429).")
  var maxEventStreamsPerKey = ResolverServerConfiguration().maximumEventStreamsPerKey

  @Option(
    name: .long, help: "Device event streams open at once from one client address (past it: 429).")
  var maxEventStreamsPerAddress = ResolverServerConfiguration().maximumEventStreamsPerAddress

  @Flag(
    name: .long,
    help: """
      Serve /metrics to anyone who reaches the port. By default it needs an admin API key \
      (X-Nearby-API-Key, or Authorization: Bearer KEY): its counters are the whole server's.
      """)
  var openMetrics = false

  @Flag(name: .long, help: .hidden)
  var metricsRequireKey = false  // the default now; still accepted from older settings files

  @Flag(
    name: .long,
    help: """
      Do not serve the web console (by default it is at /console on the same port; sign in \
      with an admin API key).
      """)
  var noConsole = false

  @Option(
    name: .long,
    help: ArgumentHelp(
      "A file whose contents sign the web console's session cookies (32 bytes or more).",
      discussion: """
        Give every instance behind one load balancer the same file; without it each process \
        signs with a random secret, and its sessions end when it restarts.
        """))
  var consoleSecretFile: String?

  @Option(
    name: .long,
    help: ArgumentHelp(
      "Serve HTTPS with this PEM certificate chain (with --tls-key), re-read on SIGHUP.",
      discussion: """
        Phones need HTTPS for the page at /web to use the microphone. A certificate from \
        Let's Encrypt (fullchain.pem) or from a LAN CA; after a renewal, `kill -HUP` the \
        server (`systemctl reload nearby-server`): new connections get the new certificate.
        """,
      valueName: "file"))
  var tlsCertificate: String?

  @Option(
    name: .long,
    help: ArgumentHelp("The certificate's unencrypted PEM private key.", valueName: "file"))
  var tlsKey: String?

  @Option(
    name: .long,
    help: ArgumentHelp(
      "Join the peer network whose project key this file holds (a client key of this server).",
      discussion: """
        Devices running `nearby` with no server (peer mode, `--api-key` this key) and this \
        server's devices of the key's project then meet when they hear each other: the server \
        answers peers asking for its devices' tokens and asks the LAN about tokens its devices \
        heard. One instance bridges; the LAN is that of --peer-interface.
        """,
      valueName: "file"))
  var peerKeyFile: String?

  @Option(
    name: .long,
    help: ArgumentHelp(
      "The network interface of the peer network (default: the routing table's).",
      valueName: "name"))
  var peerInterface: String?

  @Option(name: .long, help: "The peer network's multicast group (IPv4), as the peers'.")
  var peerGroup = LANMulticastConfiguration.defaultIPv4Group

  @Option(
    name: .long, help: "The UDP port of the peer network's group, as the peers' --peer-group-port.")
  var peerGroupPort = Int(LANPeerConfiguration.defaultGroupPort)

  @Option(
    name: .long,
    help: """
      Beacon diagnostics: a battery at or under this many millivolts raises lowBattery       (as does a trend reaching it within --low-battery-horizon-days).
      """)
  var lowBatteryMillivolts = DiagnosticsSettings().lowBatteryMillivolts

  @Option(name: .long, help: "Beacon diagnostics: how far ahead a battery trend is judged (days).")
  var lowBatteryHorizonDays: Double = 60

  @Option(
    name: .long,
    help: "Beacon diagnostics: days unobserved after which an active beacon raises lowActivity.")
  var lowActivityDays: Double = 3

  func validate() throws {
    guard (1...65535).contains(port) else {
      throw ValidationError("--port must be between 1 and 65535, got \(port)")
    }
    for (name, value) in [
      ("--max-connections-per-address", maxConnectionsPerAddress),
      ("--max-event-streams-per-key", maxEventStreamsPerKey),
      ("--max-event-streams-per-address", maxEventStreamsPerAddress),
    ] where value < 1 {
      throw ValidationError("\(name) must be 1 or more, got \(value)")
    }
    guard lostAfter > 0, lostAfter <= 86_400 else {
      throw ValidationError("--lost-after must be between 0.1 and 86400 seconds, got \(lostAfter)")
    }
    guard deviceExpiryDays == 0 || (deviceExpiryDays >= 1 / 1440 && deviceExpiryDays <= 36_500)
    else {
      throw ValidationError(
        "--device-expiry-days must be 0 (never) or between one minute (0.0007) and 36500, "
          + "got \(deviceExpiryDays)")
    }
    for rate in [requestsPerSecondPerDevice, requestsPerSecondPerAddress] {
      guard rate.isFinite, rate > 0 else {
        throw ValidationError("request rates must be more than 0, got \(rate)")
      }
    }
    guard maxConnections >= 1 else {
      throw ValidationError("--max-connections must be at least 1, got \(maxConnections)")
    }
    guard tokenLifetime >= 1, tokenLifetime <= 900 else {
      throw ValidationError(
        "--token-lifetime must be between 1 and 900 seconds, got \(tokenLifetime)")
    }
    guard requestsPerSecond.isFinite, requestsPerSecond > 0, burst.isFinite, burst >= 1 else {
      throw ValidationError(
        "--requests-per-second must be above 0 and --burst at least 1, got "
          + "\(requestsPerSecond) and \(burst)")
    }
    guard (1...10_000).contains(lowBatteryMillivolts) else {
      throw ValidationError(
        "--low-battery-millivolts must be 1 to 10000, got \(lowBatteryMillivolts)")
    }
    for (option, days) in [
      ("--low-battery-horizon-days", lowBatteryHorizonDays),
      ("--low-activity-days", lowActivityDays),
    ] {
      guard days.isFinite, days >= 1 / 24, days <= 3650 else {
        throw ValidationError("\(option) must be between one hour (0.042) and 3650, got \(days)")
      }
    }
    guard (1...65535).contains(peerGroupPort) else {
      throw ValidationError("--peer-group-port must be between 1 and 65535, got \(peerGroupPort)")
    }
    guard (tlsCertificate == nil) == (tlsKey == nil) else {
      throw ValidationError("--tls-certificate and --tls-key go together: give both, or neither")
    }
    guard Logger.Level(rawValue: logLevel) != nil else {
      throw ValidationError(
        "--log-level must be one of \(Logger.Level.allCases.map(\.rawValue)), got \(logLevel)")
    }
  }

  func run() async throws {
    // Until the reload task traps it (after the storage opens), a SIGHUP (`systemctl reload`
    // during startup) must not end the server: its default action would.
    signal(SIGHUP, SIG_IGN)
    var logger = Logger(label: "nearby.server")
    logger.logLevel = Logger.Level(rawValue: logLevel) ?? .info
    let storage: any ResolverStorage
    do {
      storage = try await database.location.open(logger: logger)
    } catch {
      throw CommandFailure("cannot open \(database.location): \(error)")
    }
    try await BootstrapKey.ensure(
      in: storage, file: bootstrapKeyFile ?? LocalServer.apiKeyFile, logger: logger)
    var configuration = ResolverServerConfiguration()
    configuration.host = host
    configuration.port = port
    configuration.resolution = ResolutionConfiguration(
      lostAfter: .seconds(lostAfter), tokenLifetime: .seconds(tokenLifetime),
      deviceExpiry: deviceExpiryDays == 0 ? nil : .seconds(deviceExpiryDays * 86_400))
    configuration.requestsPerSecond = requestsPerSecond
    configuration.burst = burst
    configuration.maximumConnections = maxConnections
    configuration.maximumConnectionsPerAddress = maxConnectionsPerAddress
    configuration.maximumEventStreamsPerKey = maxEventStreamsPerKey
    configuration.maximumEventStreamsPerAddress = maxEventStreamsPerAddress
    configuration.requestsPerSecondPerDevice = requestsPerSecondPerDevice
    configuration.burstPerDevice = requestsPerSecondPerDevice * 2
    configuration.requestsPerSecondPerAddress = requestsPerSecondPerAddress
    configuration.burstPerAddress = requestsPerSecondPerAddress * 2
    configuration.trustedProxies = Set(trustedProxy)
    configuration.metricsRequireKey = !openMetrics
    configuration.console.isEnabled = !noConsole
    if let consoleSecretFile {
      let secret = try [UInt8](Data(contentsOf: URL(fileURLWithPath: consoleSecretFile)))
      guard secret.count >= 32 else {
        throw ValidationError("--console-secret-file must hold 32 bytes or more")
      }
      configuration.console.sessionSecret = secret
    }
    configuration.diagnostics.lowBatteryMillivolts = lowBatteryMillivolts
    configuration.diagnostics.lowBatteryHorizon = .seconds(lowBatteryHorizonDays * 86_400)
    configuration.diagnostics.lowActivityAfter = .seconds(lowActivityDays * 86_400)
    if let tlsCertificate, let tlsKey {
      do {
        configuration.tls = try ServerCertificates(certificatePath: tlsCertificate, keyPath: tlsKey)
      } catch {
        await storage.shutdown()
        throw CommandFailure("\(error)")
      }
    }
    let peerBridge: PeerBridgeConfiguration?
    do {
      peerBridge = try peerBridgeConfiguration(logger: logger)
    } catch {
      await storage.shutdown()
      throw error
    }
    let server = ResolverServer(
      storage: storage, configuration: configuration, peerBridge: peerBridge, logger: logger)
    let group = ServiceGroup(
      configuration: .init(
        services: [.init(service: server)], gracefulShutdownSignals: [.sigterm, .sigint],
        logger: logger))
    do {
      try await withThrowingTaskGroup(of: Void.self) { tasks in
        // Trapped with or without TLS: SIGHUP's default would end the server
        // (`systemctl reload` sends it).
        let (certificates, log) = (configuration.tls, logger)
        tasks.addTask { await Self.reloadOnHangUp(certificates, logger: log) }
        try await group.run()
        tasks.cancelAll()
      }
    } catch {
      await storage.shutdown()
      throw CommandFailure("\(error)")
    }
    await storage.shutdown()
  }

  /// The peer network to join (`--peer-key-file`), its LAN transport opened; nil without.
  /// - Throws: ``CommandFailure`` naming the file or the port that failed.
  func peerBridgeConfiguration(logger: Logger) throws -> PeerBridgeConfiguration? {
    guard let peerKeyFile else { return nil }
    let key: String
    do {
      key = try String(contentsOfFile: peerKeyFile, encoding: .utf8)
        .trimmingCharacters(in: .whitespacesAndNewlines)
    } catch {
      throw CommandFailure(
        "cannot read --peer-key-file \(peerKeyFile): \(error.localizedDescription)")
    }
    guard !key.isEmpty else { throw CommandFailure("--peer-key-file \(peerKeyFile) is empty") }
    let lan = LANPeerConfiguration(
      group: peerGroup, groupPort: UInt16(peerGroupPort), interface: peerInterface)
    do {
      let transport = try LANPeerTransport(configuration: lan)
      logger.info(
        "peer network: who-has on the LAN group",
        metadata: [
          "group": "\(peerGroup):\(peerGroupPort)", "interface": "\(peerInterface ?? "default")",
          "answers": "\(transport.port)",
        ])
      return PeerBridgeConfiguration(apiKey: key, transports: [transport])
    } catch {
      throw CommandFailure(
        "cannot join the peer network on \(peerGroup):\(peerGroupPort): \(error); free the port "
          + "or pick another with --peer-group-port (the peers' too)")
    }
  }

  /// Re-reads the certificate and key on each SIGHUP (a renewal), until cancelled; a failed
  /// reload keeps the pair served so far and says why. Without TLS a SIGHUP is noted only.
  static func reloadOnHangUp(
    _ certificates: ServerCertificates?, logger: Logger
  ) async {
    for await _ in await UnixSignalsSequence(trapping: .sighup) {
      guard let certificates else {
        logger.notice("SIGHUP: nothing to reload (no --tls-certificate)")
        continue
      }
      do {
        try certificates.reload()
        logger.notice(
          "TLS certificate reloaded",
          metadata: [
            "certificate": "\(certificates.certificatePath)",
            "notValidAfter": "\(Date(timeIntervalSince1970: Double(certificates.notValidAfter)))",
          ])
      } catch {
        logger.error("TLS certificate not reloaded; still serving the previous one: \(error)")
      }
    }
  }
}
