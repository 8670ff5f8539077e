import TestSupport
import DBus
import Foundation
import Testing
import NearbyTesting

/// Calls, errors, timeouts and signals on the private buses.
@Suite struct ConnectionTests {
  static let path = try! DBusObjectPath("/org/nearby/test")

  @Test(.requires(.dbus)) func connectsToBothBuses() async throws {
    let system = try await TestBus.connect()
    let session = try await TestBus.connect(try TestBus.session)
    #expect(system.uniqueName.hasPrefix(":"))
    #expect(session.uniqueName.hasPrefix(":"))
    #expect(try await system.listNames().contains(system.uniqueName))
    // Unique names are counted per bus (":1.1" may live on both, such as the notification
    // double's on the session bus), so tell the buses apart by a well-known name owned on one.
    let name = "org.nearby.test.BothBuses\(UInt32.random(in: 0...UInt32.max))"
    #expect(try await system.requestName(name) == .primaryOwner)
    #expect(try await system.listNames().contains(name))
    #expect(try await !session.listNames().contains(name))
  }

  @Test func refusesABadAddress() async {
    await #expect(throws: DBusError.self) {
      _ = try await DBusConnection(.address("unix:path=/nonexistent/nearby-bus"))
    }
    await #expect(throws: DBusError.self) { _ = try await DBusConnection(.address("nonsense")) }
  }

  @Test(.requires(.dbus)) func callsTheBus() async throws {
    let bus = try await TestBus.connect()
    let id = try await bus.call(
      destination: "org.freedesktop.DBus", path: try DBusObjectPath("/org/freedesktop/DBus"),
      interface: "org.freedesktop.DBus", member: "GetId")
    #expect(id.count == 1 && (id[0].string?.count ?? 0) == 32)
  }

  @Test(.requires(.dbus)) func typedErrorsFromTheBus() async throws {
    let bus = try await TestBus.connect()
    do {
      _ = try await bus.call(
        destination: "org.nearby.test.Nobody", path: Self.path, interface: nil, member: "M")
      Issue.record("a call to a missing service succeeded")
    } catch {
      #expect(error.name == .serviceUnknown)
    }
    #expect(try await bus.nameOwner(of: "org.nearby.test.Nobody") == nil)
  }

  @Test(.requires(.dbus)) func accessDeniedByPolicy() async throws {
    let bus = try await TestBus.connect()
    do {
      try await bus.requestName("org.nearby.test.Forbidden")
      Issue.record("the policy let us own a forbidden name")
    } catch {
      #expect(error.name == .accessDenied)
      #expect(error.name.isInNamespace("org.freedesktop.DBus.Error"))
    }
  }

  @Test(.requires(.dbus)) func ownsAndReleasesNames() async throws {
    let a = try await TestBus.connect()
    let b = try await TestBus.connect()
    let name = "org.nearby.test.Owned\(UInt32.random(in: 0...UInt32.max))"
    let changes = try await b.nameOwnerChanges(of: name)
    #expect(try await a.requestName(name) == .primaryOwner)
    #expect(try await b.requestName(name) == .exists)
    #expect(try await b.nameOwner(of: name) == a.uniqueName)
    let change = await first(of: changes)
    #expect(change?.old == "" && change?.new == a.uniqueName)
    #expect(try await a.releaseName(name))
    #expect(try await b.nameOwner(of: name) == nil)
  }

  /// An interface whose one method, `Sleep`, says it was called (on `calls`) and then answers
  /// nothing until its handler is cancelled (the connection that exports it ends).
  static func slowInterface(calls: AsyncStream<Void>.Continuation) -> DBusInterface {
    DBusInterface(
      "org.nearby.Slow",
      methods: [
        DBusMethod("Sleep") { _ in
          calls.yield()
          try await untilCancelled()
        }
      ])
  }

  @Test(.requires(.dbus)) func callTimesOut() async throws {
    let server = try await TestBus.connect()
    let client = try await TestBus.connect()
    let (calls, called) = AsyncStream.makeStream(of: Void.self)
    try await server.export(Self.slowInterface(calls: called), at: Self.path)
    let start = ContinuousClock.now
    do {
      _ = try await client.call(
        destination: server.uniqueName, path: Self.path, interface: "org.nearby.Slow",
        member: "Sleep", timeout: .milliseconds(200))
      Issue.record("the call did not time out")
    } catch {
      #expect(error.name == .noReply)
      #expect(error.message.contains("org.nearby.Slow.Sleep"))
    }
    // Not before the timeout; how long after it depends on the machine's load. That it ended
    // at all is the timeout's doing: the handler never answers.
    #expect(ContinuousClock.now - start >= .milliseconds(200))
    // The call did reach the handler, which still holds on: the timeout was the client's.
    #expect(await first(of: calls) != nil)
    server.close()
  }

  @Test(.requires(.dbus)) func cancellingACallEndsIt() async throws {
    let server = try await TestBus.connect()
    let client = try await TestBus.connect()
    let (calls, called) = AsyncStream.makeStream(of: Void.self)
    try await server.export(Self.slowInterface(calls: called), at: Self.path)
    let name = server.uniqueName
    let task = Task { () async throws -> [DBusValue] in
      try await client.call(
        destination: name, path: Self.path, interface: "org.nearby.Slow", member: "Sleep")
    }
    // Cancelled while the call waits for its answer: the handler has it.
    #expect(await first(of: calls) != nil)
    task.cancel()
    let result = await task.result
    #expect(throws: DBusError.self) { try result.get() }
    if case .failure(let error) = result { #expect((error as? DBusError)?.name == .cancelled) }
    server.close()
  }

  @Test(.requires(.dbus)) func closingFailsWaitingCallsAndEndsStreams() async throws {
    let server = try await TestBus.connect()
    let client = try await TestBus.connect()
    let (calls, called) = AsyncStream.makeStream(of: Void.self)
    try await server.export(Self.slowInterface(calls: called), at: Self.path)
    let signals = try await client.signals(matching: DBusMatchRule(interface: "org.nearby.None"))
    let name = server.uniqueName
    let call = Task { () async throws -> [DBusValue] in
      try await client.call(
        destination: name, path: Self.path, interface: "org.nearby.Slow", member: "Sleep")
    }
    // Closed while the call waits for its answer: the handler has it.
    #expect(await first(of: calls) != nil)
    client.close()
    if case .failure(let error) = await call.result {
      #expect((error as? DBusError)?.name == .disconnected)
    } else {
      Issue.record("the call succeeded after close")
    }
    var iterator = signals.makeAsyncIterator()
    #expect(await iterator.next() == nil)
    #expect(!client.isConnected)
    #expect(throws: DBusError.self) {
      try client.emit(.signal(path: Self.path, interface: "org.nearby.T", member: "S"))
    }
    server.close()
  }

  @Test(.requires(.dbus)) func deliversMatchingSignalsOnly() async throws {
    let sender = try await TestBus.connect()
    let receiver = try await TestBus.connect()
    let devices = try await receiver.signals(
      matching: DBusMatchRule(
        sender: sender.uniqueName, interface: "org.freedesktop.DBus.Properties",
        member: "PropertiesChanged", arguments: [0: "org.bluez.Device1"]))
    // Every Properties signal of the sender, whatever its member and arguments (not of every
    // sender: the suites' tests run at once on this bus, and ExportTests emit some too).
    let all = try await receiver.signals(
      matching: DBusMatchRule(
        sender: sender.uniqueName, interface: "org.freedesktop.DBus.Properties"))
    let other = try DBusObjectPath("/org/bluez/hci0")
    let device = try DBusObjectPath("/org/bluez/hci0/dev_00_11_22_33_44_55")
    try sender.emit(
      .signal(
        path: other, interface: "org.freedesktop.DBus.Properties", member: "PropertiesChanged",
        body: [.string("org.bluez.Adapter1"), .vardict(["Powered": .boolean(false)]), .strings([])])
    )
    for rssi in Int16(-70)...(-61) {
      try sender.emit(
        .signal(
          path: device, interface: "org.freedesktop.DBus.Properties", member: "PropertiesChanged",
          body: [.string("org.bluez.Device1"), .vardict(["RSSI": .int16(rssi)]), .strings([])]))
    }
    var seen: [Int64] = []
    for await signal in devices {
      #expect(signal.path == device)
      #expect(signal.sender == sender.uniqueName)
      seen.append(try signal.arguments("sa{sv}as")[1].stringDictionary?["RSSI"]?.integer ?? 0)
      if seen.count == 10 { break }
    }
    #expect(seen == Array(-70...(-61)))
    let firstOfAll = await first(of: all)
    #expect(firstOfAll?.path == other)
  }

  /// The number of match rules the bus holds for `connection` (the daemon's Debug.Stats).
  static func matchRules(of connection: DBusConnection, on bus: DBusConnection) async throws
    -> Int64?
  {
    let stats = try await bus.call(
      destination: "org.freedesktop.DBus", path: try DBusObjectPath("/org/freedesktop/DBus"),
      interface: "org.freedesktop.DBus.Debug.Stats", member: "GetConnectionStats",
      [.string(connection.uniqueName)])
    return stats.first?.stringDictionary?["MatchRules"]?.integer
  }

  @Test(.requires(.dbus)) func endingAStreamRemovesItsMatchRule() async throws {
    let sender = try await TestBus.connect()
    let receiver = try await TestBus.connect()
    var stream: AsyncStream<DBusMessage>? = try await receiver.signals(
      matching: DBusMatchRule(interface: "org.nearby.Ephemeral"))
    #expect(try await Self.matchRules(of: receiver, on: sender) == 1)
    let consumer = Task { [stream] in
      for await _ in stream! {}
    }
    stream = nil
    consumer.cancel()
    #expect(
      try await eventually() {
        try await Self.matchRules(of: receiver, on: sender) == 0
      })
    // A new subscription still works and sees new signals.
    let fresh = try await receiver.signals(
      matching: DBusMatchRule(interface: "org.nearby.Ephemeral"))
    try sender.emit(.signal(path: Self.path, interface: "org.nearby.Ephemeral", member: "Ping"))
    #expect(await first(of: fresh)?.member == "Ping")
  }

  @Test(.requires(.dbus)) func refusesAnInvalidRule() async throws {
    let bus = try await TestBus.connect()
    await #expect(throws: DBusError.self) {
      _ = try await bus.signals(matching: DBusMatchRule(interface: "bad"))
    }
  }
}
