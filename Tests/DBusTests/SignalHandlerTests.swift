import TestSupport
import DBus
import Foundation
import Synchronization
import Testing
import NearbyTesting

/// Signal handlers (`handleSignals(matching:onEnd:_:)`): run synchronously on the connection's
/// dispatch thread (outside any task), in order, until cancelled or the connection closes;
/// then `onEnd`, once.
@Suite struct SignalHandlerTests {
  static let path = try! DBusObjectPath("/org/nearby/test")

  /// What a handler saw: each signal's number, the threads it ran on and whether it ran inside
  /// a task, and how many times `onEnd` ran; ``until(timeout:_:)`` waits on it.
  final class Seen: Sendable {
    private let state = Mutex<(numbers: [Int64], threads: Set<UInt>, inTask: Int, ends: Int)>(
      ([], [], 0, 0))
    private let changes = ChangeSignal()

    func record(_ signal: DBusMessage) {
      let thread = UInt(pthread_self())
      let inTask = withUnsafeCurrentTask { $0 != nil }
      state.withLock {
        $0.numbers.append(signal.body.first?.integer ?? -1)
        $0.threads.insert(thread)
        if inTask { $0.inTask += 1 }
      }
      changes.changed()
    }

    func ended() {
      state.withLock { $0.ends += 1 }
      changes.changed()
    }

    /// Waits until `condition` holds, asking it now and after each record, for at most
    /// `timeout`; returns whether it held. `condition` reads this: `seen.until { seen.ends == 1 }`.
    func until(
      timeout: Duration = defaultWaitBound, _ condition: () throws -> Bool
    ) async rethrows -> Bool {
      try await changes.wait(timeout: timeout, until: condition)
    }

    var numbers: [Int64] { state.withLock { $0.numbers } }
    var threads: Set<UInt> { state.withLock { $0.threads } }
    var inTask: Int { state.withLock { $0.inTask } }
    var ends: Int { state.withLock { $0.ends } }
  }

  static func ping(_ number: Int32, interface: String = "org.nearby.Handled") -> DBusMessage {
    .signal(path: path, interface: interface, member: "Ping", body: [.int32(number)])
  }

  @Test(.requires(.dbus)) func handlerRunsOnTheDispatchThreadInOrder() async throws {
    let sender = try await TestBus.connect()
    let receiver = try await TestBus.connect()
    let seen = Seen()
    try await receiver.handleSignals(
      matching: DBusMatchRule(sender: sender.uniqueName, interface: "org.nearby.Handled"),
      onEnd: { seen.ended() }, { seen.record($0) })
    // One signal the rule does not match, then twenty it does: only those, in order.
    try sender.emit(Self.ping(-1, interface: "org.nearby.Other"))
    for number in Int32(0)..<20 { try sender.emit(Self.ping(number)) }
    #expect(await seen.until() { seen.numbers.count >= 20 })
    #expect(seen.numbers == Array(0..<20))
    // Synchronously on the connection's one dispatch thread: never in a task, one thread.
    #expect(seen.inTask == 0)
    #expect(seen.threads.count == 1)
    #expect(!seen.threads.contains(UInt(pthread_self())))
    #expect(seen.ends == 0)
    sender.close()
    receiver.close()
  }

  @Test(.requires(.dbus)) func cancellingEndsTheHandlerAndRemovesItsRule() async throws {
    let sender = try await TestBus.connect()
    let receiver = try await TestBus.connect()
    let seen = Seen()
    let rule = DBusMatchRule(sender: sender.uniqueName, interface: "org.nearby.Handled")
    let handler = try await receiver.handleSignals(
      matching: rule, onEnd: { seen.ended() }, { seen.record($0) })
    // A stream on the same rule: the bus keeps sending these signals to the receiver after
    // the handler's rule is gone, and the stream's signal orders the check below.
    let stream = try await receiver.signals(matching: rule)
    #expect(try await ConnectionTests.matchRules(of: receiver, on: sender) == 2)
    try sender.emit(Self.ping(1))
    #expect(await seen.until() { seen.numbers == [1] })
    handler.cancel()
    handler.cancel()
    #expect(await seen.until() { seen.ends == 1 })
    #expect(
      try await eventually() {
        try await ConnectionTests.matchRules(of: receiver, on: sender) == 1
      })
    // The receiver routes each signal to the stream and to the handlers in one go: once the
    // stream has the second signal, a handler still subscribed would have had it too.
    try sender.emit(Self.ping(2))
    let recorder = StreamRecorder(stream)
    #expect(
      await recorder.first() { $0.body.first?.integer == 2 } != nil)
    #expect(seen.numbers == [1])
    #expect(seen.ends == 1)
    sender.close()
    receiver.close()
  }

  @Test(.requires(.dbus)) func closingTheConnectionEndsTheHandler() async throws {
    let receiver = try await TestBus.connect()
    let seen = Seen()
    try await receiver.handleSignals(
      matching: DBusMatchRule(interface: "org.nearby.Handled"), onEnd: { seen.ended() },
      { seen.record($0) })
    receiver.close()
    #expect(await seen.until() { seen.ends == 1 })
    await #expect(throws: DBusError.self) {
      try await receiver.handleSignals(matching: DBusMatchRule(interface: "org.nearby.Handled")) {
        _ in
      }
    }
    #expect(seen.ends == 1)
  }

  @Test(.requires(.dbus)) func refusesAnInvalidRule() async throws {
    let bus = try await TestBus.connect()
    let seen = Seen()
    await #expect(throws: DBusError.self) {
      try await bus.handleSignals(matching: DBusMatchRule(interface: "bad"), { seen.record($0) })
    }
    #expect(seen.ends == 0)
    bus.close()
  }
}
