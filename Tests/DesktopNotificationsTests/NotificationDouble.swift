import DBus
import Foundation
import Testing

/// The notification server double the test command starts (python-dbusmock's
/// notification_daemon template on the private session bus, Tools/scripts/services/
/// notifications.sh), and what it recorded.
struct NotificationDouble {
  /// One recorded `Notify` call.
  struct Call: Equatable {
    var appName: String
    var summary: String
    var body: String
  }

  let address: String
  let bus: DBusConnection

  /// Connects to the private session bus; fails naming the test command when it or the double
  /// is not running.
  static func connect() async throws -> NotificationDouble {
    let environment = ProcessInfo.processInfo.environment
    let address = try #require(
      environment["NEARBY_TEST_DBUS_SESSION_ADDRESS"],
      "no private session bus: run the tests with Tools/scripts/test.sh")
    try #require(
      environment["NEARBY_TEST_NOTIFICATIONS"] == "1",
      "no notification double: run the tests with Tools/scripts/test.sh")
    return NotificationDouble(address: address, bus: try await DBusConnection(.address(address)))
  }

  /// Every `Notify` call the double has received (dbusmock's `GetCalls`).
  func notifyCalls() async throws -> [Call] {
    let reply = try await bus.call(
      destination: "org.freedesktop.Notifications",
      path: try DBusObjectPath("/org/freedesktop/Notifications"),
      interface: "org.freedesktop.DBus.Mock", member: "GetCalls")
    return (reply.first?.elements ?? []).compactMap { call in
      guard let fields = call.fields, fields.count == 3, fields[1].string == "Notify",
        let arguments = fields[2].elements, arguments.count == 8,
        let appName = arguments[0].string, let summary = arguments[3].string,
        let body = arguments[4].string
      else { return nil }
      return Call(appName: appName, summary: summary, body: body)
    }
  }
}
