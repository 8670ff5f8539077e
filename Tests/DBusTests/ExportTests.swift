import DBus
import Foundation
import TestSupport
import Testing
import NearbyTesting

/// Objects exported on one connection, used from another connection and from `gdbus`.
@Suite struct ExportTests {
  static let root = try! DBusObjectPath("/org/nearby/app")
  static let advert = try! DBusObjectPath("/org/nearby/app/advert0")

  static func advertInterface(released: @escaping @Sendable () -> Void) -> DBusInterface {
    DBusInterface(
      "org.bluez.LEAdvertisement1",
      methods: [
        DBusMethod("Release") { _ in
          released()
          return []
        },
        DBusMethod("Echo", input: "sa{sv}", output: "sa{sv}") { call in call.body },
        DBusMethod("Refuse") { _ in throw DBusError("org.bluez.Error.NotPermitted", "no") },
      ],
      properties: [
        DBusProperty("Type", .string("broadcast")),
        DBusProperty(
          "ServiceData",
          .vardict([
            "ad1cf74e-c1af-499e-bb67-00374f1e8f82": .bytes([0x10, 1, 2, 3, 4, 5, 6, 7, 8, 0xc5])
          ])),
        DBusProperty("Includes", .strings([])),
        DBusProperty("TxPower", .int16(4), access: .readWrite),
        DBusProperty("Tag", .string("a"), access: .readWrite) { value in
          if value.string == "bad" { throw DBusError(.invalidArgs, "bad tag") }
        },
      ])
  }

  @Test(.requires(.dbus)) func methodsAndErrorsSeenByAnotherConnection() async throws {
    let server = try await TestBus.connect()
    let client = try await TestBus.connect()
    let released = Counter()
    try await server.export(Self.advertInterface { released.add() }, at: Self.advert)
    let name = server.uniqueName
    _ = try await client.call(
      destination: name, path: Self.advert, interface: "org.bluez.LEAdvertisement1",
      member: "Release")
    #expect(released.value == 1)
    let echoed = try await client.call(
      destination: name, path: Self.advert, interface: "org.bluez.LEAdvertisement1",
      member: "Echo", [.string("x"), .vardict(["k": .bytes([1])])])
    #expect(echoed == [.string("x"), .vardict(["k": .bytes([1])])])
    await expectError("org.bluez.Error.NotPermitted") {
      _ = try await client.call(
        destination: name, path: Self.advert, interface: "org.bluez.LEAdvertisement1",
        member: "Refuse")
    }
    await expectError(DBusError.Name.invalidArgs) {
      _ = try await client.call(
        destination: name, path: Self.advert, interface: "org.bluez.LEAdvertisement1",
        member: "Echo", [.string("wrong")])
    }
    await expectError(DBusError.Name.unknownMethod) {
      _ = try await client.call(
        destination: name, path: Self.advert, interface: "org.bluez.LEAdvertisement1",
        member: "Nope")
    }
    await expectError(DBusError.Name.unknownInterface) {
      _ = try await client.call(
        destination: name, path: Self.advert, interface: "org.nearby.Nope", member: "Release")
    }
    await expectError(DBusError.Name.unknownObject) {
      _ = try await client.call(
        destination: name, path: try DBusObjectPath("/nothing"), interface: nil, member: "X")
    }
  }

  @Test(.requires(.dbus)) func propertiesGetGetAllSetAndChanged() async throws {
    let server = try await TestBus.connect()
    let client = try await TestBus.connect()
    try await server.export(Self.advertInterface {}, at: Self.advert)
    let name = server.uniqueName
    let iface = "org.bluez.LEAdvertisement1"
    #expect(
      try await client.property("Type", interface: iface, of: name, at: Self.advert)
        == .string("broadcast"))
    let all = try await client.allProperties(interface: iface, of: name, at: Self.advert)
    #expect(
      all["ServiceData"]?.stringDictionary?["ad1cf74e-c1af-499e-bb67-00374f1e8f82"]?.bytes?.count
        == 10)
    #expect(all["Includes"] == .strings([]))

    let changes = try await client.signals(
      matching: DBusMatchRule(
        sender: name, interface: "org.freedesktop.DBus.Properties", member: "PropertiesChanged",
        path: Self.advert))
    try await client.setProperty(
      "TxPower", to: .int16(-8), interface: iface, of: name, at: Self.advert)
    #expect(
      await server.exportedProperty("TxPower", interface: iface, at: Self.advert) == .int16(-8))
    let change = try #require(await first(of: changes))
    let body = try change.arguments("sa{sv}as")
    #expect(body[0] == .string(iface))
    #expect(body[1].stringDictionary == ["TxPower": .int16(-8)])

    try await server.setProperty(
      "Type", to: .string("peripheral"), interface: iface, at: Self.advert)
    #expect(
      try await client.property("Type", interface: iface, of: name, at: Self.advert)
        == .string("peripheral"))

    await expectError(DBusError.Name.propertyReadOnly) {
      try await client.setProperty(
        "Type", to: .string("x"), interface: iface, of: name, at: Self.advert)
    }
    await expectError(DBusError.Name.invalidArgs) {
      try await client.setProperty(
        "TxPower", to: .string("x"), interface: iface, of: name, at: Self.advert)
    }
    await expectError(DBusError.Name.invalidArgs) {
      try await client.setProperty(
        "Tag", to: .string("bad"), interface: iface, of: name, at: Self.advert)
    }
    await expectError(DBusError.Name.unknownProperty) {
      _ = try await client.property("Nope", interface: iface, of: name, at: Self.advert)
    }
    await #expect(throws: DBusError.self) {
      try await server.setProperty("TxPower", to: .int32(1), interface: iface, at: Self.advert)
    }
  }

  @Test(.requires(.dbus)) func objectManagerReportsAddedAndRemoved() async throws {
    let server = try await TestBus.connect()
    let client = try await TestBus.connect()
    await server.addObjectManager(at: Self.root)
    let name = server.uniqueName
    let signals = try await client.signals(
      matching: DBusMatchRule(sender: name, interface: "org.freedesktop.DBus.ObjectManager"))
    try await server.export(Self.advertInterface {}, at: Self.advert)
    let objects = try await client.managedObjects(of: name, at: Self.root)
    #expect(objects.keys.sorted() == [Self.advert])
    #expect(objects[Self.advert]?["org.bluez.LEAdvertisement1"]?["Type"] == .string("broadcast"))

    await server.unexport(at: Self.advert)
    #expect(try await client.managedObjects(of: name, at: Self.root).isEmpty)
    var iterator = signals.makeAsyncIterator()
    let added = try #require(await iterator.next())
    #expect(added.member == "InterfacesAdded")
    let addedBody = try added.arguments("oa{sa{sv}}")
    #expect(addedBody[0] == .objectPath(Self.advert))
    #expect(
      DBusConnection.interfaceMap(addedBody[1])?["org.bluez.LEAdvertisement1"]?["Type"]
        == .string("broadcast"))
    let removed = try #require(await iterator.next())
    #expect(removed.member == "InterfacesRemoved")
    #expect(try removed.arguments("oas")[1] == .strings(["org.bluez.LEAdvertisement1"]))
  }

  /// `afterReply` runs once the reply is queued, after an error reply too: here it waits for a
  /// gate the test opens only when the caller has its answer (queued after it, the reply would
  /// never come and the call would time out).
  @Test(.requires(.dbus)) func afterReplyRunsOnceTheCallerHasItsAnswer() async throws {
    let server = try await TestBus.connect()
    let client = try await TestBus.connect()
    let (gate, open) = AsyncStream.makeStream(of: Void.self)
    let ran = Counter()
    let after: DBusMethod.AfterReply = { call in
      for await _ in gate { break }
      if call.member == "Fail" || call.body == [.string("x")] { ran.add() }
    }
    try await server.export(
      DBusInterface(
        "org.nearby.Test1",
        methods: [
          DBusMethod("Echo", input: "s", output: "s", handler: { $0.body }, afterReply: after),
          DBusMethod(
            "Fail", handler: { _ in throw DBusError(.failed, "no") }, afterReply: after),
        ]), at: Self.advert)
    let answer = try await client.call(
      destination: server.uniqueName, path: Self.advert, interface: "org.nearby.Test1",
      member: "Echo", [.string("x")])
    #expect(answer == [.string("x")])
    #expect(ran.value == 0)
    open.yield()
    #expect(await ran.until { ran.value == 1 })
    await expectError(DBusError.Name.failed) {
      _ = try await client.call(
        destination: server.uniqueName, path: Self.advert, interface: "org.nearby.Test1",
        member: "Fail")
    }
    open.yield()
    #expect(await ran.until { ran.value == 2 })
  }

  @Test(.requires(.dbus)) func callFilterAnswersInsteadOfTheObject() async throws {
    let server = try await TestBus.connect()
    let client = try await TestBus.connect()
    try await server.export(Self.advertInterface {}, at: Self.advert)
    let refused = client.uniqueName
    await server.setCallFilter { call in
      call.sender == refused ? DBusError(.accessDenied, "not you") : nil
    }
    await expectError(DBusError.Name.accessDenied) {
      _ = try await client.property(
        "Type", interface: "org.bluez.LEAdvertisement1", of: server.uniqueName, at: Self.advert)
    }
    let other = try await TestBus.connect()
    #expect(
      try await other.property(
        "Type", interface: "org.bluez.LEAdvertisement1", of: server.uniqueName, at: Self.advert)
        == .string("broadcast"))
    await server.setCallFilter(nil)
    #expect(
      try await client.property(
        "Type", interface: "org.bluez.LEAdvertisement1", of: server.uniqueName, at: Self.advert)
        == .string("broadcast"))
  }

  /// Another D-Bus implementation (GLib's gdbus) reads and calls our object.
  @Test(.requires(.dbus)) func gdbusSeesTheExportedObject() async throws {
    let bus = try TestBus.system
    guard case .address(let address) = bus else { return }
    let server = try await TestBus.connect(bus)
    let released = Counter()
    try await server.export(Self.advertInterface { released.add() }, at: Self.advert)
    let name = server.uniqueName
    let (status, xml) = try await runCommand(
      "/usr/bin/gdbus",
      ["introspect", "--address", address, "--dest", name, "--object-path", Self.advert.rawValue])
    #expect(status == 0, "gdbus introspect: \(xml)")
    #expect(xml.contains("interface org.bluez.LEAdvertisement1"))
    #expect(xml.contains("Release"))
    #expect(xml.contains("readonly s Type = 'broadcast'"))
    let (getStatus, value) = try await runCommand(
      "/usr/bin/gdbus",
      [
        "call", "--address", address, "--dest", name, "--object-path", Self.advert.rawValue,
        "--method", "org.freedesktop.DBus.Properties.Get", "org.bluez.LEAdvertisement1",
        "ServiceData",
      ])
    #expect(getStatus == 0, "gdbus call: \(value)")
    #expect(value.contains("'ad1cf74e-c1af-499e-bb67-00374f1e8f82': <[byte 0x10, 0x01"))
    let (callStatus, output) = try await runCommand(
      "/usr/bin/gdbus",
      [
        "call", "--address", address, "--dest", name, "--object-path", Self.advert.rawValue,
        "--method", "org.bluez.LEAdvertisement1.Release",
      ])
    #expect(callStatus == 0, "gdbus call Release: \(output)")
    #expect(released.value == 1)
  }
}

/// Expects `body` to throw a DBusError named `name`.
func expectError(
  _ name: DBusError.Name, sourceLocation: SourceLocation = #_sourceLocation,
  _ body: () async throws -> Void
) async {
  do {
    try await body()
    Issue.record("expected \(name), nothing was thrown", sourceLocation: sourceLocation)
  } catch {
    #expect((error as? DBusError)?.name == name, "\(error)", sourceLocation: sourceLocation)
  }
}

/// A thread-safe counter for handlers; ``until(timeout:_:)`` waits on it.
final class Counter: Sendable {
  private let count = Watched(0)
  func add() { count.withLock { $0 += 1 } }
  var value: Int { count.value }

  /// Waits until `condition` holds, asking it now and after each `add()`, for at most
  /// `timeout`; returns whether it held. `condition` reads this: `ran.until { ran.value == 1 }`.
  func until(
    timeout: Duration = defaultWaitBound, _ condition: () throws -> Bool
  ) async rethrows -> Bool {
    try await count.until(timeout: timeout) { _ in try condition() }
  }
}
