import DBus
import Testing

/// Values through libdbus's wire format and back.
@Suite struct MarshallingTests {
  static let path = try! DBusObjectPath("/org/nearby/test")

  static let samples: [DBusValue] = [
    .byte(0), .byte(255),
    .boolean(true), .boolean(false),
    .int16(.min), .int16(-1), .uint16(.max),
    .int32(.min), .uint32(.max),
    .int64(.min), .int64(.max), .uint64(.max),
    .double(-1.5), .double(.infinity), .double(0),
    .string(""), .string("héllo wörld ✓"),
    .objectPath(path), .objectPath(.root),
    .signature(try! DBusSignature("a{sv}")), .signature(try! DBusSignature("")),
    .bytes([]), .bytes([0, 1, 2, 0xff]),
    .array(.string, []), .strings(["a", "b"]),
    .array(.int32, [.int32(1), .int32(-2)]),
    .array(.array(.byte), [.bytes([1]), .bytes([])]),
    .array(.structure([.string, .int32]), [.structure([.string("x"), .int32(1)])]),
    .vardict([:]),
    .vardict(["RSSI": .int16(-60), "Name": .string("dev"), "Paired": .boolean(false)]),
    .dictionary(
      key: .uint16, value: .variant,
      [DBusDictEntry(.uint16(0x004c), .variant(.bytes([0x02, 0x15])))]),
    .dictionary(
      key: .objectPath, value: .array(.string), [DBusDictEntry(.objectPath(path), .strings(["i"]))]),
    .structure([.byte(1), .structure([.boolean(true), .double(2)]), .vardict(["k": .uint32(3)])]),
    .variant(.variant(.int32(5))),
    .variant(
      .vardict(["ServiceData": .vardict(["ad1cf74e-c1af-499e-bb67-00374f1e8f82": .bytes([1, 2])])])),
  ]

  @Test(arguments: samples)
  func roundTrips(_ value: DBusValue) throws {
    var message = DBusMessage.signal(
      path: Self.path, interface: "org.nearby.Test", member: "Value", body: [value])
    message.serial = 7
    let decoded = try DBusMessage(serialized: message.serialized())
    #expect(decoded.body == [value])
    #expect(decoded.signature == value.type.signature)
    #expect(decoded.serial == 7)
    #expect(decoded.member == "Value")
    #expect(decoded.interface == "org.nearby.Test")
    #expect(decoded.path == Self.path)
  }

  @Test func roundTripsAWholeBody() throws {
    let message = DBusMessage.methodCall(
      destination: "org.bluez", path: Self.path, interface: "org.bluez.Adapter1",
      member: "SetDiscoveryFilter", body: Self.samples)
    let decoded = try DBusMessage(serialized: message.serialized())
    #expect(decoded.body == Self.samples)
    #expect(decoded.destination == "org.bluez")
    #expect(decoded.kind == .methodCall)
  }

  @Test func decodedMessageEqualsTheOriginal() throws {
    var message = DBusMessage.methodCall(
      destination: "org.bluez", path: Self.path, interface: "org.bluez.Adapter1",
      member: "SetDiscoveryFilter", body: [.vardict(["Transport": .string("le")])])
    message.serial = 9
    var decoded = try DBusMessage(serialized: message.serialized())
    #expect(decoded == message)
    #expect(decoded.signature == "a{sv}")
    decoded.body.append(.string("more"))
    #expect(decoded.signature == "a{sv}s")
  }

  @Test func byteArraysDecodeAsBytes() throws {
    let message = DBusMessage.signal(
      path: Self.path, interface: "org.nearby.Test", member: "V",
      body: [.array(.byte, [.byte(1), .byte(2)])])
    #expect(try DBusMessage(serialized: message.serialized()).body == [.bytes([1, 2])])
  }

  @Test func readsPropertiesChanged() throws {
    let message = DBusMessage.signal(
      path: try DBusObjectPath("/org/bluez/hci0/dev_00_11_22_33_44_55"),
      interface: "org.freedesktop.DBus.Properties", member: "PropertiesChanged",
      body: [
        .string("org.bluez.Device1"),
        .vardict(["RSSI": .int16(-42), "ServiceData": .vardict(["uuid": .bytes([9, 8])])]),
        .strings([]),
      ])
    let decoded = try DBusMessage(serialized: message.serialized())
    let arguments = try decoded.arguments("sa{sv}as")
    let changed = try #require(arguments[1].stringDictionary)
    #expect(changed["RSSI"]?.integer == -42)
    #expect(changed["ServiceData"]?.stringDictionary?["uuid"]?.bytes == [9, 8])
    #expect(throws: DBusError.self) { try decoded.arguments("sa{sv}") }
  }
}

/// Messages and values that must be refused with an error, never a crash.
@Suite struct MalformedMessageTests {
  static func valid() throws -> [UInt8] {
    try DBusMessage.signal(
      path: MarshallingTests.path, interface: "org.nearby.Test", member: "V",
      body: [.vardict(["a": .bytes([1, 2, 3])]), .string("text")]
    ).serialized()
  }

  @Test func refusesEveryTruncation() throws {
    let bytes = try Self.valid()
    for length in 0..<bytes.count {
      #expect(throws: DBusError.self) { try DBusMessage(serialized: bytes.prefix(length)) }
    }
  }

  @Test func refusesTrailingBytes() throws {
    #expect(throws: DBusError.self) {
      try DBusMessage(serialized: try Self.valid() + [0, 0, 0, 0])
    }
  }

  @Test func refusesGarbage() {
    #expect(throws: DBusError.self) {
      try DBusMessage(serialized: [UInt8](repeating: 0x6c, count: 64))
    }
    #expect(throws: DBusError.self) { try DBusMessage(serialized: [UInt8]()) }
  }

  /// Every single-byte corruption either still decodes (the change was harmless) or fails with
  /// a DBusError: never a crash.
  @Test func survivesByteFlips() throws {
    let bytes = try Self.valid()
    var refused = 0
    for index in bytes.indices {
      for flip: UInt8 in [0x01, 0x80, 0xff] {
        var corrupt = bytes
        corrupt[index] ^= flip
        do { _ = try DBusMessage(serialized: corrupt) } catch { refused += 1 }
      }
    }
    #expect(refused > bytes.count)
  }

  @Test func refusesInvalidStringContent() {
    let message = DBusMessage.signal(
      path: MarshallingTests.path, interface: "org.nearby.Test", member: "V",
      body: [.string("nul\u{0}inside")])
    #expect(throws: DBusError.self) { try message.serialized() }
  }

  @Test func refusesMistypedContainers() {
    let bad: [DBusValue] = [
      .array(.string, [.int32(1)]),
      .dictionary(key: .string, value: .variant, [DBusDictEntry(.string("k"), .int32(1))]),
      .dictionary(key: .variant, value: .string, []),
      .structure([]),
    ]
    for value in bad {
      let message = DBusMessage.signal(
        path: MarshallingTests.path, interface: "org.nearby.Test", member: "V", body: [value])
      #expect(throws: DBusError.self) { try message.serialized() }
    }
  }

  @Test func refusesInvalidHeaders() {
    let path = MarshallingTests.path
    let bad = [
      DBusMessage.signal(path: path, interface: "nodots", member: "V"),
      DBusMessage.signal(path: path, interface: "org.nearby.Test", member: "1bad"),
      DBusMessage.methodCall(destination: "not a name", path: path, interface: nil, member: "M"),
      DBusMessage(kind: .methodReturn),
      DBusMessage(kind: .error, replySerial: 1),
      DBusMessage(kind: .signal, path: path, member: "NoInterface"),
    ]
    for message in bad {
      #expect(throws: DBusError.self) { try message.serialized() }
    }
  }

  @Test func errorsCarryTheirName() throws {
    let call = DBusMessage.methodCall(
      destination: ":1.1", path: MarshallingTests.path, interface: nil, member: "M")
    let reply = call.errorReply(DBusError("org.bluez.Error.InProgress", "busy"))
    var sent = reply
    sent.replySerial = 3
    let decoded = try DBusMessage(serialized: sent.serialized())
    let error = try #require(decoded.error)
    #expect(error.name == "org.bluez.Error.InProgress")
    #expect(error.name.isInNamespace("org.bluez.Error"))
    #expect(error.message == "busy")
  }
}
