import CDBus
import Foundation
import Glibc
import Logging
import Synchronization

/// The engine under a ``DBusConnection``: the libdbus handle, the dispatch thread, the table
/// of calls waiting for replies and the signal subscriptions.
///
/// The dispatch thread is the only reader of the connection. It routes replies to waiting
/// calls and signals to subscription streams (or runs a subscription's handler) directly, and
/// feeds incoming method calls to the connection's object registry (an actor) through an
/// ordered stream. A mutex guards the tables and the handle's lifetime (see
/// ``ConnectionHandle``); it is never held while user code runs or while a stream is finished.
final class ConnectionCore: Sendable {
  struct PendingCall {
    var continuation: CheckedContinuation<Result<DBusMessage, DBusError>, Never>
    var deadline: ContinuousClock.Instant
    var what: String
  }

  /// Where a subscription's signals go.
  enum Delivery {
    /// Yielded to a stream.
    case stream(AsyncStream<DBusMessage>.Continuation)
    /// Passed to a handler on the dispatch thread; `onEnd` runs once, after its last call.
    case handler(@Sendable (DBusMessage) -> Void, onEnd: @Sendable () -> Void)

    /// Ends the delivery: finishes the stream, or runs the handler's `onEnd`.
    func end() {
      switch self {
      case .stream(let continuation): continuation.finish()
      case .handler(_, let onEnd): onEnd()
      }
    }
  }

  struct Subscription {
    var rule: DBusMatchRule
    var delivery: Delivery
  }

  struct State {
    var open = true
    var pending: [UInt32: PendingCall] = [:]
    var subscriptions: [UInt64: Subscription] = [:]
    var nextSubscription: UInt64 = 1
    /// Handlers removed by ``ConnectionCore/end(_:)`` whose `onEnd` the dispatch
    /// thread has yet to run (after any call of theirs it had begun).
    var endedHandlers: [Delivery] = []
  }

  let handle: ConnectionHandle
  let uniqueName: String
  let logger: Logger
  let bus: DBusBus
  private let state = Mutex(State())
  /// Method calls for exported objects, in arrival order, read by the object registry.
  let incomingCalls: AsyncStream<DBusMessage>
  private let incomingCallsContinuation: AsyncStream<DBusMessage>.Continuation

  private init(handle: ConnectionHandle, uniqueName: String, bus: DBusBus, logger: Logger) {
    self.handle = handle
    self.uniqueName = uniqueName
    self.bus = bus
    self.logger = logger
    (incomingCalls, incomingCallsContinuation) = AsyncStream.makeStream(
      of: DBusMessage.self, bufferingPolicy: .bufferingOldest(4096))
  }

  // MARK: Connecting

  /// Connects on a new dispatch thread (connecting and registering with the bus block) and
  /// returns once registered.
  static func connect(to bus: DBusBus, logger: Logger) async throws(DBusError) -> ConnectionCore {
    let result: Result<ConnectionCore, DBusError> = await withCheckedContinuation { continuation in
      let thread = Thread {
        switch openAndRegister(bus: bus, logger: logger) {
        case .failure(let error): continuation.resume(returning: .failure(error))
        case .success(let core):
          continuation.resume(returning: .success(core))
          core.runDispatchLoop()
        }
      }
      thread.name = "dbus \(bus)"
      thread.start()
    }
    return try result.get()
  }

  /// Opens the connection and says Hello to the bus (blocking; dispatch thread).
  private static func openAndRegister(bus: DBusBus, logger: Logger) -> Result<
    ConnectionCore, DBusError
  > {
    _ = dbus_threads_init_default()
    var error = CDBus.DBusError()
    dbus_error_init(&error)
    let opened: OpaquePointer?
    switch bus {
    case .system: opened = dbus_bus_get_private(DBUS_BUS_SYSTEM, &error)
    case .session: opened = dbus_bus_get_private(DBUS_BUS_SESSION, &error)
    case .address(let address):
      if let connection = dbus_connection_open_private(address, &error) {
        if dbus_bus_register(connection, &error) == 0 {
          dbus_connection_close(connection)
          dbus_connection_unref(connection)
          opened = nil
        } else {
          opened = connection
        }
      } else {
        opened = nil
      }
    }
    guard let connection = opened else {
      return .failure(DBusError(taking: &error, or: "cannot connect to the \(bus)"))
    }
    dbus_connection_set_exit_on_disconnect(connection, 0)
    var socket: Int32 = -1
    guard dbus_connection_get_unix_fd(connection, &socket) != 0,
      let pipe = ConnectionHandle.makeWakePipe()
    else {
      dbus_connection_close(connection)
      dbus_connection_unref(connection)
      return .failure(DBusError(.notSupported, "the \(bus) is not reached through a socket"))
    }
    let name = dbus_bus_get_unique_name(connection).map { String(cString: $0) } ?? ""
    let handle = ConnectionHandle(
      connection: connection, socket: socket, wakeRead: pipe.read, wakeWrite: pipe.write)
    var logger = logger
    logger[metadataKey: "dbus"] = "\(name)"
    logger.debug("connected to the \(bus)")
    return .success(ConnectionCore(handle: handle, uniqueName: name, bus: bus, logger: logger))
  }

  // MARK: Sending

  var isOpen: Bool { state.withLock { $0.open } }

  /// Sends a message that expects no reply; returns its serial.
  func send(_ message: DBusMessage) throws(DBusError) -> UInt32 {
    let raw = try message.makeLibdbusMessage()
    defer { dbus_message_unref(raw) }
    let serial = try state.withLock { state throws(DBusError) -> UInt32 in
      guard state.open else { throw DBusError(.disconnected, "the connection is closed") }
      var serial: UInt32 = 0
      guard dbus_connection_send(handle.connection, raw, &serial) != 0 else {
        throw DBusError(.noMemory, "out of memory while sending")
      }
      return serial
    }
    handle.wake()
    return serial
  }

  /// Sends a method call and waits for its reply, at most `timeout`.
  func call(_ message: DBusMessage, timeout: Duration) async throws(DBusError) -> DBusMessage {
    guard message.kind == .methodCall, !message.noReplyExpected else {
      throw DBusError.invalidValue("call needs a method call that expects a reply")
    }
    let raw = try message.makeLibdbusMessage()
    defer { dbus_message_unref(raw) }
    let what =
      "\(message.interface.map { $0 + "." } ?? "")\(message.member ?? "") on "
      + "\(message.path?.rawValue ?? "") of \(message.destination ?? "the peer")"
    let sentSerial = Atomic<UInt32>(0)
    let result = await withTaskCancellationHandler {
      await withCheckedContinuation {
        (continuation: CheckedContinuation<Result<DBusMessage, DBusError>, Never>) in
        let failure: DBusError? = state.withLock { state in
          guard state.open else { return DBusError(.disconnected, "the connection is closed") }
          var serial: UInt32 = 0
          guard dbus_connection_send(handle.connection, raw, &serial) != 0 else {
            return DBusError(.noMemory, "out of memory while sending")
          }
          state.pending[serial] = PendingCall(
            continuation: continuation, deadline: .now + timeout, what: what)
          sentSerial.store(serial, ordering: .sequentiallyConsistent)
          return nil
        }
        if let failure {
          continuation.resume(returning: .failure(failure))
          return
        }
        handle.wake()
        if Task.isCancelled { cancel(serial: sentSerial.load(ordering: .sequentiallyConsistent)) }
      }
    } onCancel: {
      let serial = sentSerial.load(ordering: .sequentiallyConsistent)
      if serial != 0 { cancel(serial: serial) }
    }
    let reply = try result.get()
    if let error = reply.error { throw error }
    return reply
  }

  private func cancel(serial: UInt32) {
    let call = state.withLock { $0.pending.removeValue(forKey: serial) }
    call?.continuation.resume(
      returning: .failure(DBusError(.cancelled, "the call to \(call?.what ?? "") was cancelled")))
  }

  // MARK: Signals

  /// Adds a local subscription (the caller adds the bus match rule).
  func subscribe(
    _ rule: DBusMatchRule, bufferingPolicy: AsyncStream<DBusMessage>.Continuation.BufferingPolicy
  ) -> (id: UInt64, stream: AsyncStream<DBusMessage>)? {
    let (stream, continuation) = AsyncStream.makeStream(
      of: DBusMessage.self, bufferingPolicy: bufferingPolicy)
    guard let id = subscribe(rule, .stream(continuation)) else { return nil }
    return (id, stream)
  }

  /// Adds a local subscription delivered as the caller says; `nil` when the connection is
  /// closed.
  func subscribe(_ rule: DBusMatchRule, _ delivery: Delivery) -> UInt64? {
    state.withLock { state -> UInt64? in
      guard state.open else { return nil }
      let id = state.nextSubscription
      state.nextSubscription += 1
      state.subscriptions[id] = Subscription(rule: rule, delivery: delivery)
      return id
    }
  }

  /// Sets what runs when a stream subscription's consumer goes away (outside the lock).
  func setTermination(of id: UInt64, _ action: @escaping @Sendable () -> Void) {
    let delivery = state.withLock { $0.subscriptions[id]?.delivery }
    if case .stream(let continuation)? = delivery {
      continuation.onTermination = { _ in action() }
    }
  }

  /// Removes a local subscription; returns its delivery so that the caller can end it outside
  /// the lock.
  func unsubscribe(_ id: UInt64) -> Delivery? {
    state.withLock { $0.subscriptions.removeValue(forKey: id)?.delivery }
  }

  /// Ends a subscription: a stream finishes at once, a handler's `onEnd` runs on the dispatch
  /// thread after any call of the handler it had begun. Returns whether it was still
  /// subscribed.
  func end(_ id: UInt64) -> Bool {
    let removed = state.withLock { state -> Delivery? in
      guard let delivery = state.subscriptions.removeValue(forKey: id)?.delivery else {
        return nil
      }
      if case .handler = delivery {
        state.endedHandlers.append(delivery)
        // Under the lock: the dispatch thread releases the wake pipe under it once closed.
        if state.open { handle.wake() }
      }
      return delivery
    }
    guard let removed else { return false }
    if case .stream = removed { removed.end() }
    return true
  }

  // MARK: Closing

  /// Closes the connection: waiting calls fail with ``DBusError/Name-swift.struct/disconnected``,
  /// subscription streams finish. Returns at once; the dispatch thread releases the handle.
  func close() {
    let changed = state.withLock { state in
      let was = state.open
      state.open = false
      return was
    }
    if changed { handle.wake() }
  }

  // MARK: Dispatch thread

  private func runDispatchLoop() {
    let connection = handle.connection
    var fds = [
      pollfd(fd: handle.socket, events: Int16(POLLIN), revents: 0),
      pollfd(fd: handle.wakeRead, events: Int16(POLLIN), revents: 0),
    ]
    var reason = "closed"
    while true {
      while let raw = dbus_connection_pop_message(connection) {
        route(raw)
        dbus_message_unref(raw)
      }
      let (open, timeout, ended) = state.withLock { state in
        let ended = state.endedHandlers
        state.endedHandlers = []
        return (state.open, Self.pollTimeout(state.pending), ended)
      }
      for delivery in ended { delivery.end() }
      guard open else { break }
      fds[0].events = Int16(POLLIN)
      if dbus_connection_has_messages_to_send(connection) != 0 { fds[0].events |= Int16(POLLOUT) }
      fds[0].revents = 0
      fds[1].revents = 0
      let ready = poll(&fds, 2, timeout)
      if ready < 0 && errno != EINTR {
        reason = "poll failed: errno \(errno)"
        break
      }
      if fds[1].revents != 0 { handle.drainWakes() }
      if dbus_connection_read_write(connection, 0) == 0
        || dbus_connection_get_is_connected(connection) == 0
      {
        while let raw = dbus_connection_pop_message(connection) {
          route(raw)
          dbus_message_unref(raw)
        }
        reason = "the bus closed the connection"
        break
      }
      expireCalls()
    }
    shutDown(reason: reason)
  }

  /// Milliseconds until the earliest call deadline (at most 1 s; -1 never used so that the
  /// loop re-checks its state at least once a second).
  private static func pollTimeout(_ pending: [UInt32: PendingCall]) -> Int32 {
    guard let earliest = pending.values.map(\.deadline).min() else { return 1000 }
    let left = earliest - .now
    if left <= .zero { return 0 }
    let milliseconds =
      left.components.seconds * 1000 + left.components.attoseconds / 1_000_000_000_000_000 + 1
    return Int32(min(milliseconds, 1000))
  }

  private func expireCalls() {
    let now = ContinuousClock.now
    let expired = state.withLock { state -> [PendingCall] in
      let serials = state.pending.filter { $0.value.deadline <= now }.map(\.key)
      return serials.compactMap { state.pending.removeValue(forKey: $0) }
    }
    for call in expired {
      call.continuation.resume(
        returning: .failure(
          DBusError(.noReply, "no reply to \(call.what) within the call's timeout")))
    }
  }

  /// Routes one incoming message (dispatch thread).
  private func route(_ raw: OpaquePointer) {
    switch dbus_message_get_type(raw) {
    case cdbus_message_type_method_return, cdbus_message_type_error:
      let serial = dbus_message_get_reply_serial(raw)
      guard let call = state.withLock({ $0.pending.removeValue(forKey: serial) }) else { return }
      do throws(DBusError) {
        call.continuation.resume(returning: .success(try DBusMessage(libdbus: raw)))
      } catch {
        call.continuation.resume(returning: .failure(error))
      }
    case cdbus_message_type_signal:
      routeSignal(raw)
    case cdbus_message_type_method_call:
      do throws(DBusError) {
        incomingCallsContinuation.yield(try DBusMessage(libdbus: raw))
      } catch {
        replyToUndecodable(raw, error)
      }
    default:
      break
    }
  }

  private func routeSignal(_ raw: OpaquePointer) {
    let sender = dbus_message_get_sender(raw).map { String(cString: $0) }
    let interface = dbus_message_get_interface(raw).map { String(cString: $0) }
    let member = dbus_message_get_member(raw).map { String(cString: $0) }
    let path = dbus_message_get_path(raw).map { String(cString: $0) }
    if interface == "org.freedesktop.DBus.Local", member == "Disconnected" {
      close()
      return
    }
    let candidates = state.withLock { state in
      state.subscriptions.values.filter {
        $0.rule.matchesHeader(sender: sender, interface: interface, member: member, path: path)
      }
    }
    guard !candidates.isEmpty else { return }
    let message: DBusMessage
    do throws(DBusError) {
      message = try DBusMessage(libdbus: raw)
    } catch {
      logger.warning(
        "dropped signal \(interface ?? "").\(member ?? "") from \(sender ?? ""): \(error)")
      return
    }
    for subscription in candidates where subscription.rule.matchesArguments(message.body) {
      switch subscription.delivery {
      case .stream(let continuation): continuation.yield(message)
      case .handler(let handler, _): handler(message)
      }
    }
  }

  private func replyToUndecodable(_ raw: OpaquePointer, _ error: DBusError) {
    guard dbus_message_get_no_reply(raw) == 0 else { return }
    var reply = DBusMessage(
      kind: .error, errorName: DBusError.Name.invalidArgs.rawValue,
      destination: dbus_message_get_sender(raw).map { String(cString: $0) },
      replySerial: dbus_message_get_serial(raw), body: [.string(error.message)])
    reply.noReplyExpected = true
    _ = try? send(reply)
  }

  /// Fails waiting calls, finishes streams, releases the handle (dispatch thread, last).
  private func shutDown(reason: String) {
    let (pending, deliveries) = state.withLock { state in
      state.open = false
      let taken = (
        Array(state.pending.values),
        state.endedHandlers + state.subscriptions.values.map(\.delivery)
      )
      state.pending = [:]
      state.subscriptions = [:]
      state.endedHandlers = []
      handle.release()
      return taken
    }
    logger.debug("connection ended: \(reason)")
    for call in pending {
      call.continuation.resume(
        returning: .failure(DBusError(.disconnected, "\(reason) before \(call.what) answered")))
    }
    for delivery in deliveries { delivery.end() }
    incomingCallsContinuation.finish()
  }
}
