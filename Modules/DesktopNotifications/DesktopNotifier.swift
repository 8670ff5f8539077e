public import DBus
public import Logging

/// Shows desktop notifications through `org.freedesktop.Notifications` on the session bus
/// (the Desktop Notifications Specification's `Notify` call).
///
/// It never throws and never waits long: each call is bounded by `callTimeout`. When the bus
/// has no notification server, or the server does not answer in time, the notification is
/// dropped with a warning (one per run of failures; the next success is logged at info) and
/// later ones are tried again. When there is no session bus at all, that is logged once and the
/// notifier turns itself off (``isDisabled``). A lost bus connection is reopened on the next
/// call.
///
/// An actor: call it from any task. Connecting runs on the DBus module's own thread (bounded by
/// libdbus's registration timeout); nothing blocks a Swift concurrency thread.
public actor DesktopNotifier {
  /// The time a `Notify` call waits for the server's answer by default.
  public static let defaultCallTimeout: Duration = .seconds(2)
  /// The well-known name of the notification server.
  public static let serverName = "org.freedesktop.Notifications"

  private let bus: DBusBus
  private let destination: String
  private let callTimeout: Duration
  private let logger: Logger
  private var connection: DBusConnection?
  /// While the bus connection is being opened: the callers waiting for it (`nil`: not
  /// opening).
  private var connectWaiters: [CheckedContinuation<DBusConnection?, Never>]?
  private var failing = false

  /// Whether the notifier gave up because there is no bus to reach; then ``notify(_:)``
  /// returns `nil` at once.
  public private(set) var isDisabled = false

  /// A notifier; it connects on its first notification.
  /// - Parameters:
  ///   - bus: the bus the server is on; `.session` reads `$DBUS_SESSION_BUS_ADDRESS`.
  ///   - destination: the server's bus name (tests point it elsewhere).
  ///   - callTimeout: how long one `Notify` call may take.
  ///   - logger: where warnings about an absent or silent server go.
  public init(
    bus: DBusBus = .session, destination: String = DesktopNotifier.serverName,
    callTimeout: Duration = DesktopNotifier.defaultCallTimeout,
    logger: Logger = Logger(label: "nearby.notifications")
  ) {
    self.bus = bus
    self.destination = destination
    self.callTimeout = callTimeout
    self.logger = logger
  }

  /// Shows `notification`. Cancelling the calling task ends a waiting call at once.
  /// - Returns: the server's id for the notification, or `nil` when it was not shown (no bus,
  ///   no server, no answer in time, an error reply — each logged, never thrown).
  @discardableResult
  public func notify(_ notification: DesktopNotification) async -> UInt32? {
    guard !isDisabled, let connection = await connect() else { return nil }
    let expire = notification.expireAfter.map(Self.milliseconds) ?? -1
    do throws(DBusError) {
      let reply = try await connection.call(
        destination: destination, path: try DBusObjectPath("/org/freedesktop/Notifications"),
        interface: Self.serverName, member: "Notify",
        [
          .string(notification.appName), .uint32(0), .string(notification.icon),
          .string(notification.summary), .string(notification.body), .strings([]),
          .vardict(["urgency": .byte(1)]), .int32(expire),
        ], timeout: callTimeout)
      guard case .uint32(let id)? = reply.first else {
        throw DBusError(.failed, "Notify answered \(reply), not an id")
      }
      if failing {
        failing = false
        logger.info(
          "desktop notifications work again", metadata: ["dbus.destination": "\(destination)"])
      }
      return id
    } catch {
      if error.name == .disconnected {
        self.connection = nil
      }
      let metadata: Logger.Metadata = [
        "dbus.destination": "\(destination)", "error": "\(error)",
        "notification.summary": "\(notification.summary)",
      ]
      if failing || error.name == .cancelled {
        logger.debug("desktop notification not shown", metadata: metadata)
      } else {
        failing = true
        logger.warning(
          "desktop notification not shown: \(Self.explain(error)); later ones are tried again",
          metadata: metadata)
      }
      return nil
    }
  }

  /// Closes the bus connection; a later ``notify(_:)`` reopens it.
  public func close() {
    connection?.close()
    connection = nil
  }

  /// The bus connection, opened when there is none. Concurrent callers share one attempt:
  /// the first opens it in its task, the others wait for its outcome.
  private func connect() async -> DBusConnection? {
    if let connection, connection.isConnected { return connection }
    if connectWaiters != nil {
      return await withCheckedContinuation { connectWaiters?.append($0) }
    }
    connectWaiters = []
    let opened: DBusConnection?
    do throws(DBusError) {
      opened = try await DBusConnection(bus, logger: logger)
      connection = opened
    } catch {
      opened = nil
      // A caller that went away is no sign that the bus is missing.
      if !isDisabled, !Task.isCancelled {
        isDisabled = true
        logger.warning(
          "desktop notifications are off: cannot reach the \(bus) (is DBUS_SESSION_BUS_ADDRESS set?)",
          metadata: ["error": "\(error)"])
      }
    }
    for waiter in connectWaiters ?? [] { waiter.resume(returning: opened) }
    connectWaiters = nil
    return opened
  }

  /// `Notify`'s `expire_timeout`: milliseconds, at least 1 (0 would mean "never").
  private static func milliseconds(_ duration: Duration) -> Int32 {
    let value = (duration / .milliseconds(1)).rounded()
    return Int32(min(max(value, 1), Double(Int32.max)))
  }

  private static func explain(_ error: DBusError) -> String {
    switch error.name {
    case .serviceUnknown, .nameHasNoOwner: "no notification server is running on the bus"
    case .noReply: "the notification server did not answer in time"
    default: "\(error)"
    }
  }
}
