import ArgumentParser
import CommandLineSupport
import DesktopNotifications
import Foundation
import Logging
import ServiceLifecycle
import Systemd

/// The background-restore launcher: restores an app's background publications and
/// subscriptions from its store and keeps them alive while the app is not running. Meant to
/// run as a systemd user service (`nearby background install` writes the unit).
@main
struct NearbyRestore: AsyncParsableCommand {
  static let configuration = CommandConfiguration(
    commandName: "nearby-restore",
    abstract: "Keeps an app's background Nearby publications and subscriptions alive.",
    discussion: """
      Reads the app's store ($XDG_CONFIG_HOME/nearby/<app>.json), restores the background \
      publications and subscriptions recorded there (BLE only) when background mode is on and \
      Nearby permission is granted, then tells systemd READY=1 with a STATUS= line and runs \
      until SIGTERM or SIGINT. Logs go to the journal when systemd connected stderr to it \
      ($JOURNAL_STREAM), to stderr otherwise.

      Exit codes: 0 stopped by a signal, or --once finished, or background mode is off; \
      1 the store could not be read or the manager not started; 64 bad arguments.
      """,
    version: NearbyVersion.current)

  @Option(help: "The app id whose store to restore (its file is <app>.json).")
  var app: String

  @Option(help: "The store folder (default: $XDG_CONFIG_HOME/nearby or ~/.config/nearby).")
  var configDir: String?

  @Option(help: "The API key for the resolver (default: $NEARBY_API_KEY, else 'local').")
  var apiKey: String?

  @Option(
    help: """
      The resolver server (http(s)://host:port, as `nearby server` serves); default: an \
      embedded resolver in this process, which only other managers of this process reach.
      """)
  var server: String?

  @Option(
    help: """
      BLE (BlueZ): auto uses it when /sys/class/bluetooth lists an adapter; on or off force \
      it. Background work is BLE only.
      """)
  var ble: BLEChoice = .auto

  @Option(help: "Where to log: auto (journal when started by systemd), journal or stderr.")
  var logTo: LogChoice = .auto

  @Flag(help: "Restore, notify READY, report and exit instead of running until a signal.")
  var once = false

  @Flag(help: "With --once: print the report as one JSON object on stdout.")
  var json = false

  @Flag(
    help: """
      Do not show a desktop notification for messages found in background (they are still \
      logged). Notifications go to org.freedesktop.Notifications on the session bus \
      ($DBUS_SESSION_BUS_ADDRESS).
      """)
  var noNotifications = false

  @Flag(help: "Log at debug level.")
  var verbose = false

  enum LogChoice: String, ExpressibleByArgument, CaseIterable {
    case auto, journal, stderr
  }

  enum BLEChoice: String, ExpressibleByArgument, CaseIterable {
    case auto, on, off

    /// Whether to run the BlueZ medium.
    var isWanted: Bool {
      switch self {
      case .on: true
      case .off: false
      case .auto:
        !((try? FileManager.default.contentsOfDirectory(atPath: "/sys/class/bluetooth")) ?? [])
          .isEmpty
      }
    }
  }

  func validate() throws {
    if let server {
      guard let url = URL(string: server), ["http", "https"].contains(url.scheme ?? ""),
        url.host != nil
      else {
        throw ValidationError("--server must be an http(s) URL such as http://127.0.0.1:7171")
      }
    }
  }

  func run() async throws {
    let destination: LogDestination =
      switch logTo {
      case .auto: LogDestination.detect()
      case .journal: .journal
      case .stderr: .stderr
      }
    LoggingSystem.bootstrap(destination.handlerFactory(identifier: "nearby-restore"))
    var logger = Logger(label: "nearby.restore")
    logger.logLevel = verbose ? .debug : .info
    logger[metadataKey: "nearby.app"] = "\(app)"

    let service = RestoreService(
      appID: app, directory: configDir.map { URL(fileURLWithPath: $0) },
      apiKey: apiKey ?? ProcessInfo.processInfo.environment["NEARBY_API_KEY"] ?? "local",
      server: server.flatMap(URL.init(string:)), ble: ble.isWanted, once: once, json: json,
      desktopNotifier: noNotifications ? nil : DesktopNotifier(bus: .session, logger: logger),
      logger: logger)
    let group = ServiceGroup(
      configuration: .init(
        services: [.init(service: service, successTerminationBehavior: .gracefullyShutdownGroup)],
        gracefulShutdownSignals: [.sigterm, .sigint],
        logger: logger))
    do {
      try await group.run()
    } catch {
      logger.critical("nearby-restore failed", metadata: ["error": "\(error)"])
      SystemdNotifier().notify("STATUS=failed: \(error)\nERRNO=1")
      await JournalWriter.shared.flush()
      throw ExitCode.failure
    }
    if destination == .journal { await JournalWriter.shared.flush() }
  }
}
