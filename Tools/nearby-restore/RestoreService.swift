import BackgroundPersistence
import Core
import DesktopNotifications
import Foundation
import Logging
import PermissionStore
import Resolution
import ResolverClient
import BLEBlueZ
import ServiceLifecycle
import Systemd

/// Restores the background work of one app and holds it until graceful shutdown.
struct RestoreService: Service {
  let appID: String
  let directory: URL?
  let apiKey: String
  /// The resolver server; `nil`: the embedded resolver.
  let server: URL?
  /// Whether to run the BlueZ medium.
  let ble: Bool
  let once: Bool
  let json: Bool
  /// Shows a desktop notification per message found in background; `nil` with
  /// `--no-notifications`.
  let desktopNotifier: DesktopNotifier?
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

    let resolver: ResolverChoice =
      if let server { .server(server, logger: logger) } else { .embedded }
    var configuration = MessageManager.Configuration(resolver: resolver, logger: logger)
    configuration.permission = permission
    // Background work is BLE only.
    configuration.mediums = ble ? [.bluez()] : []
    if !ble {
      logger.warning(
        "no BLE medium (no adapter in /sys/class/bluetooth, or --ble off): restored work is registered with the resolver but not discovered over the air"
      )
    }
    let manager = try await MessageManager(apiKey: apiKey, configuration: configuration)
    await manager.setAppState(.background)
    let logger = logger
    // Found messages go to the notifier through a bounded stream, so a slow or absent
    // notification server never holds up the manager (the newest 64 wait, older ones drop).
    let (found, foundContinuation) = AsyncStream.makeStream(
      of: Message.self, bufferingPolicy: .bufferingNewest(64))
    let desktopNotifier = desktopNotifier
    let appID = appID
    let notifications = Task {
      for await message in found {
        await desktopNotifier?.notify(DesktopNotification(found: message, appName: appID))
      }
    }
    defer { notifications.cancel() }
    let keeper = BackgroundKeeper(
      persistence: background, manager: manager, logger: logger,
      onFound: { descriptor, message in
        logger.notice(
          "found a message in background",
          metadata: [
            "nearby.subscription": "\(descriptor.id)", "nearby.namespace": "\(message.namespace)",
            "nearby.type": "\(message.type)", "nearby.text": "\(message.text ?? "<binary>")",
          ])
        if desktopNotifier != nil { foundContinuation.yield(message) }
      },
      onLost: { descriptor, message in
        logger.info(
          "lost a message in background",
          metadata: ["nearby.subscription": "\(descriptor.id)", "nearby.type": "\(message.type)"])
      })
    let changes = await keeper.sync()
    if !background.isEnabled {
      logger.notice(
        "background mode is off for this app: nothing to keep alive until it is turned on with `nearby background on --app \(appID)`"
      )
    }
    let readyStatus = await status(keeper, background, permission, failures: changes.failures)
    notifier.ready(status: readyStatus)
    logger.info("ready", metadata: ["status": "\(readyStatus)"])

    if once {
      print(await report(keeper, background, permission, changes))
    } else {
      // Follows the store (descriptors added or removed, the mode switched) until
      // SIGTERM/SIGINT; the keeper holds the handles, and so the work.
      await cancelWhenGracefulShutdown {
        await withTaskGroup(of: Void.self) { group in
          group.addTask {
            await keeper.follow { changes in
              notifier.status(
                await status(keeper, background, permission, failures: changes.failures))
            }
          }
          group.addTask {
            for await _ in permission.changes() {
              notifier.status(await status(keeper, background, permission))
            }
          }
          await group.next()
          group.cancelAll()
        }
      }
      notifier.stopping(status: "stopping")
      logger.info("stopping on request")
    }
    await keeper.stopAll()
    await manager.shutdown()
    // A notification still waiting for the server is dropped rather than holding up the stop.
    foundContinuation.finish()
    notifications.cancel()
    await notifications.value
    await desktopNotifier?.close()
  }

  private func status(
    _ keeper: BackgroundKeeper, _ background: BackgroundPersistence,
    _ permission: NearbyPermission, failures: [String: String] = [:]
  ) async -> String {
    guard background.isEnabled else { return "background mode is off; nothing to restore" }
    var status =
      "restored \(await keeper.publicationHandles.count) publications, "
      + "\(await keeper.subscriptionHandles.count) subscriptions"
    if !failures.isEmpty { status += ", \(failures.count) failed" }
    if !permission.isGranted {
      status +=
        "; paused until Nearby permission is granted (nearby permission grant --app \(appID))"
    }
    return status
  }

  private func report(
    _ keeper: BackgroundKeeper, _ background: BackgroundPersistence,
    _ permission: NearbyPermission, _ changes: BackgroundKeeper.Changes
  ) async -> String {
    let report = Report(
      app: appID, backgroundMode: background.isEnabled, permissionGranted: permission.isGranted,
      publications: await keeper.publicationHandles.count,
      subscriptions: await keeper.subscriptionHandles.count, expired: changes.expired.count,
      failures: changes.failures)
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
