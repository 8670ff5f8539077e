import BackgroundPersistence
import Core
import Foundation
import Logging
import PermissionStore
import Resolution
import ServiceLifecycle
import Systemd

/// Restores the background work of one app and holds it until graceful shutdown.
struct RestoreService: Service {
  let appID: String
  let directory: URL?
  let apiKey: String
  let once: Bool
  let json: Bool
  let logger: Logger

  struct Report: Encodable {
    var app: String
    var backgroundMode: Bool
    var permissionGranted: Bool
    var publications: Int
    var subscriptions: Int
    var expired: Int
    var failures: [String: String]
  }

  func run() async throws {
    let notifier = SystemdNotifier()
    let store = try await DefaultsStore(appID: appID, directory: directory, logger: logger)
    defer { store.close() }
    let background = BackgroundPersistence(store: store, logger: logger)
    let permission = NearbyPermission(store: store, prompt: .never)

    guard background.isEnabled else {
      logger.notice(
        "background mode is off for this app: nothing to keep alive; turn it on with `nearby background on --app \(appID)`"
      )
      notifier.ready(status: "background mode is off; nothing to restore")
      if once { print(report(background, permission, nil)) }
      return
    }

    var configuration = MessageManager.Configuration(resolver: .embedded, logger: logger)
    configuration.permission = permission
    // Background work is BLE only; this launcher gets the BlueZ medium's factory when that
    // plugin is part of the build. Until then the work is registered with the resolver only.
    configuration.mediums = []
    logger.warning(
      "this build has no BLE medium (the BlueZ plugin): restored work is registered with the resolver but not discovered over the air"
    )
    let manager = try await MessageManager(apiKey: apiKey, configuration: configuration)
    await manager.setAppState(.background)
    let logger = logger
    let restored = try await background.restore(
      into: manager,
      onFound: { descriptor, message in
        logger.notice(
          "found a message in background",
          metadata: [
            "nearby.subscription": "\(descriptor.id)", "nearby.namespace": "\(message.namespace)",
            "nearby.type": "\(message.type)", "nearby.text": "\(message.text ?? "<binary>")",
          ])
      },
      onLost: { descriptor, message in
        logger.info(
          "lost a message in background",
          metadata: ["nearby.subscription": "\(descriptor.id)", "nearby.type": "\(message.type)"])
      })
    var status =
      "restored \(restored.publications.count) publications, "
      + "\(restored.subscriptions.count) subscriptions"
    if !restored.failures.isEmpty { status += ", \(restored.failures.count) failed" }
    if !permission.isGranted {
      status +=
        "; paused until Nearby permission is granted (nearby permission grant --app \(appID))"
    }
    notifier.ready(status: status)
    logger.info("ready", metadata: ["status": "\(status)"])

    if once {
      print(report(background, permission, restored))
    } else {
      // Keeps the handles (and so the work) until SIGTERM/SIGINT.
      try? await gracefulShutdown()
      _ = restored
      notifier.stopping(status: "stopping")
      logger.info("stopping on request")
    }
    await manager.shutdown()
  }

  private func report(
    _ background: BackgroundPersistence, _ permission: NearbyPermission,
    _ restored: BackgroundPersistence.Restored?
  ) -> String {
    let report = Report(
      app: appID, backgroundMode: background.isEnabled, permissionGranted: permission.isGranted,
      publications: restored?.publications.count ?? 0,
      subscriptions: restored?.subscriptions.count ?? 0, expired: restored?.expired.count ?? 0,
      failures: restored?.failures ?? [:])
    if json {
      let encoder = JSONEncoder()
      encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
      return (try? encoder.encode(report)).map { String(decoding: $0, as: UTF8.self) } ?? "{}"
    }
    return
      "app \(appID): background mode \(report.backgroundMode ? "on" : "off"), permission "
      + "\(report.permissionGranted ? "granted" : "not granted"), restored "
      + "\(report.publications) publications and \(report.subscriptions) subscriptions"
      + (report.expired > 0 ? ", \(report.expired) expired" : "")
  }
}
