public import Logging

/// A connection to a D-Bus message bus: method calls with timeouts, signal subscriptions as
/// `AsyncStream`s (or handlers run on the connection's thread), and objects this process
/// exports.
///
/// Each connection runs one dispatch thread (a Foundation `Thread`, never a Swift concurrency
/// thread) that alone reads the socket; it resumes waiting calls, yields signals to their
/// streams (or runs their handlers, ``handleSignals(matching:onEnd:_:)``) and feeds incoming
/// method calls to the actor that serves exported objects. Every method here may be called
/// from any task; none blocks a Swift concurrency thread.
///
/// ```swift
/// let bus = try await DBusConnection(.system)
/// let reply = try await bus.call(
///   destination: "org.bluez", path: .root, interface: "org.freedesktop.DBus.ObjectManager",
///   member: "GetManagedObjects", timeout: .seconds(5))
/// ```
///
/// The connection stays open until ``close()`` or until the last reference goes away; when
/// the bus goes away, waiting calls fail with ``DBusError/Name-swift.struct/disconnected`` and
/// every signal stream finishes.
public final class DBusConnection: Sendable {
  let core: ConnectionCore
  let registry: ObjectRegistry
  private let serving: Task<Void, Never>

  /// The default time a call waits for its reply (libdbus's default).
  public static let defaultTimeout: Duration = .seconds(25)

  /// Connects and registers with a bus.
  /// - Parameters:
  ///   - bus: which bus.
  ///   - logger: where the connection logs (debug: connect and disconnect; warnings: replies
  ///     or signals it could not send or decode).
  /// - Throws: ``DBusError`` with libdbus's error name when the bus cannot be reached or
  ///   refuses the connection (``DBusError/Name-swift.struct/noServer``,
  ///   ``DBusError/Name-swift.struct/accessDenied``, ``DBusError/Name-swift.struct/badAddress``,
  ///   ...).
  public init(_ bus: DBusBus, logger: Logger = Logger(label: "nearby.dbus")) async throws(DBusError)
  {
    let core = try await ConnectionCore.connect(to: bus, logger: logger)
    let registry = ObjectRegistry(core: core)
    self.core = core
    self.registry = registry
    serving = Task { await registry.run() }
  }

  deinit { core.close() }

  /// This connection's unique bus name, such as `:1.42`.
  public var uniqueName: String { core.uniqueName }

  /// Whether the connection is still open.
  public var isConnected: Bool { core.isOpen }

  /// Closes the connection. Waiting calls fail with
  /// ``DBusError/Name-swift.struct/disconnected``; signal streams finish. Safe to call twice.
  public func close() { core.close() }

  // MARK: Calls

  /// Sends a method call and waits for its reply.
  /// - Parameters:
  ///   - message: a ``DBusMessage/Kind/methodCall`` that expects a reply.
  ///   - timeout: how long to wait for the reply.
  /// - Returns: the reply (a ``DBusMessage/Kind/methodReturn``).
  /// - Throws: ``DBusError``: the peer's error reply with its name; ``DBusError/Name-swift.struct/noReply``
  ///   after `timeout`; ``DBusError/Name-swift.struct/disconnected``;
  ///   ``DBusError/Name-swift.struct/cancelled`` when the task is cancelled;
  ///   ``DBusError/Name-swift.struct/invalidArgs`` for a message that cannot be encoded.
  public func call(_ message: DBusMessage, timeout: Duration = defaultTimeout)
    async throws(DBusError) -> DBusMessage
  {
    try await core.call(message, timeout: timeout)
  }

  /// Calls a method and returns the reply's values; see ``call(_:timeout:)`` for the errors.
  public func call(
    destination: String?, path: DBusObjectPath, interface: String?, member: String,
    _ arguments: [DBusValue] = [], timeout: Duration = defaultTimeout
  ) async throws(DBusError) -> [DBusValue] {
    try await core.call(
      .methodCall(
        destination: destination, path: path, interface: interface, member: member,
        body: arguments), timeout: timeout
    ).body
  }

  /// Sends a message without waiting for a reply (a signal, or a call with
  /// ``DBusMessage/noReplyExpected``). Returns the serial given to it.
  /// - Throws: ``DBusError`` when the message cannot be encoded or the connection is closed.
  @discardableResult
  public func send(_ message: DBusMessage) throws(DBusError) -> UInt32 {
    try core.send(message)
  }

  /// Emits a signal (same as ``send(_:)``; a name that reads better at call sites).
  public func emit(_ signal: DBusMessage) throws(DBusError) {
    guard signal.kind == .signal else { throw DBusError.invalidValue("emit needs a signal") }
    _ = try core.send(signal)
  }

  // MARK: Signals

  /// Subscribes to the signals matching `rule`.
  ///
  /// Returns once the bus has accepted the match rule, so every matching signal sent after
  /// this returns is delivered. The bus's rule is removed when the stream's consumer stops
  /// (the stream terminates) or the connection closes (the stream finishes).
  /// - Parameters:
  ///   - rule: which signals to receive (sender, interface, member, path, arguments).
  ///   - bufferingPolicy: what to keep when the consumer falls behind; by default the newest
  ///     4096 signals.
  /// - Throws: ``DBusError``: an invalid rule, the bus's refusal (such as
  ///   `org.freedesktop.DBus.Error.LimitsExceeded`), or a closed connection.
  public func signals(
    matching rule: DBusMatchRule,
    bufferingPolicy: AsyncStream<DBusMessage>.Continuation.BufferingPolicy = .bufferingNewest(4096)
  ) async throws(DBusError) -> AsyncStream<DBusMessage> {
    try rule.validate()
    guard let (id, stream) = core.subscribe(rule, bufferingPolicy: bufferingPolicy) else {
      throw DBusError(.disconnected, "the connection is closed")
    }
    try await addMatch(rule, for: id)
    let core = self.core
    core.setTermination(of: id) {
      guard core.unsubscribe(id) != nil else { return }
      Self.removeMatch(rule, on: core)
    }
    return stream
  }

  /// Runs `handler` for each signal matching `rule`, synchronously on the connection's dispatch
  /// thread, in the order the signals arrive: no stream, no task wake-up between the socket and
  /// the handler. For the hot paths where that hop costs (the BLE medium's advertising
  /// reports); ``signals(matching:bufferingPolicy:)`` is the usual way.
  ///
  /// The handler runs on the dispatch thread (a Foundation `Thread`, not a Swift concurrency
  /// thread), and while it runs the connection reads nothing else: no reply, signal or method
  /// call. So it must be quick and **must never block**: no lock held for long, no waiting for
  /// anything, above all not for something this connection delivers (a call's reply would never
  /// come). It may yield to an `AsyncStream`, take a short `Mutex`, or ``send(_:)``. Other
  /// subscriptions' streams and handlers see the same signals in the same order.
  ///
  /// Returns once the bus has accepted the match rule, so every matching signal sent after this
  /// returns reaches the handler, until ``DBusSignalHandler/cancel()`` or until the connection
  /// closes; then `onEnd` runs, once, on the dispatch thread, after the handler's last call (it
  /// runs too when this throws after the subscription was made: the bus refused the rule).
  /// Releasing the returned ``DBusSignalHandler`` does not end the subscription.
  /// - Parameters:
  ///   - rule: which signals to receive (sender, interface, member, path, arguments).
  ///   - onEnd: runs once when the subscription ends (cancelled, or the connection closed).
  ///   - handler: runs for each matching signal, on the dispatch thread; must not block.
  /// - Returns: the subscription, to cancel it.
  /// - Throws: ``DBusError``: an invalid rule, the bus's refusal (such as
  ///   `org.freedesktop.DBus.Error.LimitsExceeded`), or a closed connection.
  @discardableResult
  public func handleSignals(
    matching rule: DBusMatchRule, onEnd: @escaping @Sendable () -> Void = {},
    _ handler: @escaping @Sendable (DBusMessage) -> Void
  ) async throws(DBusError) -> DBusSignalHandler {
    try rule.validate()
    guard let id = core.subscribe(rule, .handler(handler, onEnd: onEnd)) else {
      throw DBusError(.disconnected, "the connection is closed")
    }
    try await addMatch(rule, for: id)
    return DBusSignalHandler(core: core, id: id, rule: rule)
  }

  /// Asks the bus for the signals of subscription `id`'s rule; when it refuses, ends the
  /// subscription (its stream finishes, its handler's `onEnd` runs) and throws.
  private func addMatch(_ rule: DBusMatchRule, for id: UInt64) async throws(DBusError) {
    do {
      _ = try await callBus("AddMatch", [.string(rule.text)])
    } catch {
      _ = core.end(id)
      throw error
    }
  }

  /// Tells the bus to drop a subscription's rule (no reply awaited); nothing once closed.
  static func removeMatch(_ rule: DBusMatchRule, on core: ConnectionCore) {
    guard core.isOpen else { return }
    var removal = DBusMessage.methodCall(
      destination: "org.freedesktop.DBus", path: Self.busPath,
      interface: "org.freedesktop.DBus", member: "RemoveMatch", body: [.string(rule.text)])
    removal.noReplyExpected = true
    _ = try? core.send(removal)
  }

  static let busPath = DBusObjectPath(unchecked: "/org/freedesktop/DBus")

  /// Calls a method of the bus itself (`org.freedesktop.DBus`).
  func callBus(_ member: String, _ arguments: [DBusValue], timeout: Duration = defaultTimeout)
    async throws(DBusError) -> [DBusValue]
  {
    try await call(
      destination: "org.freedesktop.DBus", path: Self.busPath, interface: "org.freedesktop.DBus",
      member: member, arguments, timeout: timeout)
  }
}

/// A subscription made with ``DBusConnection/handleSignals(matching:onEnd:_:)``: its handler
/// runs on the connection's dispatch thread until ``cancel()`` or until the connection closes.
public final class DBusSignalHandler: Sendable {
  let core: ConnectionCore
  let id: UInt64
  let rule: DBusMatchRule

  init(core: ConnectionCore, id: UInt64, rule: DBusMatchRule) {
    self.core = core
    self.id = id
    self.rule = rule
  }

  /// Ends the subscription and removes its match rule at the bus; safe to call twice, and from
  /// any thread, the handler included. A signal the dispatch thread is handing to the handler
  /// when this is called still reaches it; the subscription's `onEnd` then runs on the dispatch
  /// thread, after that last call.
  public func cancel() {
    guard core.end(id) else { return }
    DBusConnection.removeMatch(rule, on: core)
  }
}
