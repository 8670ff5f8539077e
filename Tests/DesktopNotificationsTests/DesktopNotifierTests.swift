import DBus
import DesktopNotifications
import Foundation
import InMemoryLogging
import Logging
import MediumTestKit
import Testing
import TestSupport
import NearbyTesting

@Suite("DesktopNotifier")
struct DesktopNotifierTests {
  static func logger(_ logs: InMemoryLogHandler) -> Logger {
    Logger(label: "test.notifications") { _ in logs }
  }

  @Test(
    "a notification reaches the notification server with its app name, title and body",
    .requires(.dbus, .notifications))
  func notifies() async throws {
    let double = try await NotificationDouble.connect()
    let logs = InMemoryLogHandler.keepingEverything()
    let notifier = DesktopNotifier(bus: .address(double.address), logger: Self.logger(logs))
    let tag = UUID().uuidString
    let id = await notifier.notify(
      DesktopNotification(appName: "nearby.test", summary: "found \(tag)", body: "10% off"))
    #expect(id != nil && id != 0)
    let calls = try await double.notifyCalls()
    #expect(
      calls.contains(.init(appName: "nearby.test", summary: "found \(tag)", body: "10% off")),
      "\(calls)")
    #expect(!logs.messages.contains { $0.0 >= .warning }, "\(logs.messages)")
    await notifier.close()
  }

  @Test(
    "no notification server: no crash, a quick nil, one warning, and later ones tried again",
    .requires(.dbus, .notifications))
  func noServer() async throws {
    let double = try await NotificationDouble.connect()
    let logs = InMemoryLogHandler.keepingEverything()
    let notifier = DesktopNotifier(
      bus: .address(double.address), destination: "org.nearby.test.NoNotifications",
      logger: Self.logger(logs))
    let clock = ContinuousClock()
    let start = clock.now
    #expect(await notifier.notify(DesktopNotification(appName: "a", summary: "one")) == nil)
    #expect(await notifier.notify(DesktopNotification(appName: "a", summary: "two")) == nil)
    // No hang. The bound is loose because a loaded test machine stalls whole test processes;
    // the warning below shows the bus answered ServiceUnknown at once (no timeout waited out).
    #expect(clock.now - start < .seconds(60))
    #expect(await !notifier.isDisabled)
    let warnings = logs.messages.filter { $0.0 == .warning }.map(\.1)
    #expect(warnings.count == 1, "\(logs.messages)")
    #expect(warnings.first?.contains("no notification server") == true, "\(warnings)")
    // The second notification was tried too (logged at debug while the failure lasts).
    #expect(logs.messages.contains { $0.0 == .debug && $0.1 == "desktop notification not shown" })
    await notifier.close()
  }

  @Test(
    "a server that never answers: the call ends after its timeout with a warning",
    .requires(.dbus, .notifications))
  func silentServer() async throws {
    let double = try await NotificationDouble.connect()
    let server = try await DBusConnection(.address(double.address))
    defer { server.close() }
    let name = "org.nearby.test.SilentNotifications"
    try await server.export(
      DBusInterface(
        "org.freedesktop.Notifications",
        methods: [
          // Never answers: holds the call until the server connection closes.
          DBusMethod("Notify", input: "susssasa{sv}i", output: "u") { _ in
            try await untilCancelled()
          }
        ]), at: try DBusObjectPath("/org/freedesktop/Notifications"))
    _ = try await server.requestName(name)

    let logs = InMemoryLogHandler.keepingEverything()
    let notifier = DesktopNotifier(
      bus: .address(double.address), destination: name, callTimeout: .milliseconds(300),
      logger: Self.logger(logs))
    let clock = ContinuousClock()
    let start = clock.now
    #expect(await notifier.notify(DesktopNotification(appName: "a", summary: "late")) == nil)
    // Ended by our 300 ms timeout (the warning says NoReply), not by the server, which never
    // answers; the wall-clock bound is loose for a loaded machine.
    #expect(clock.now - start < .seconds(60))
    let warnings = logs.messages.filter { $0.0 == .warning }.map(\.1)
    #expect(warnings.contains { $0.contains("did not answer in time") }, "\(logs.messages)")
    await notifier.close()
  }

  @Test("no session bus at all: logged once, then notifications are off")
  func noBus() async throws {
    let logs = InMemoryLogHandler.keepingEverything()
    let notifier = DesktopNotifier(
      bus: .address("unix:path=/tmp/nearby-no-bus-\(UUID().uuidString)"),
      logger: Self.logger(logs))
    #expect(await notifier.notify(DesktopNotification(appName: "a", summary: "one")) == nil)
    #expect(await notifier.notify(DesktopNotification(appName: "a", summary: "two")) == nil)
    #expect(await notifier.isDisabled)
    let warnings = logs.messages.filter { $0.0 == .warning }.map(\.1)
    #expect(warnings.count == 1, "\(logs.messages)")
    #expect(warnings.first?.contains("desktop notifications are off") == true)
  }
}
