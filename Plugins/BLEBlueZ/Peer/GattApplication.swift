import DBus

/// The objects peer resolution exports for `GattManager1.RegisterApplication`: an object
/// manager at ``root``, the service (``GattPeerProfile/serviceUUID``) and its inbox and outbox
/// characteristics. The handlers run on the D-Bus connection's tasks and call into the
/// transport's actor.
enum GattApplication {
  static let root = try! DBusObjectPath("/org/nearby/ble/peer")
  static let service = try! DBusObjectPath("/org/nearby/ble/peer/service0")
  static let inbox = try! DBusObjectPath("/org/nearby/ble/peer/service0/char0")
  static let outbox = try! DBusObjectPath("/org/nearby/ble/peer/service0/char1")

  /// What a call from bluetoothd carries in its options: the calling device's object path and
  /// the offset (ATT's, for read long and prepared writes).
  struct CallOptions: Sendable {
    var device: String
    var offset: Int

    init(_ value: DBusValue?) throws(DBusError) {
      let options = value?.stringDictionary ?? [:]
      guard let device = options["device"]?.objectPath?.rawValue else {
        throw DBusError(.invalidArgs, "no device in the options")
      }
      self.device = device
      offset = options["offset"]?.integer.map(Int.init) ?? 0
    }
  }

  /// Exports the service and its characteristics on `connection`.
  static func export(
    on connection: DBusConnection,
    write: @escaping @Sendable ([UInt8], CallOptions) async throws -> Void,
    read: @escaping @Sendable (CallOptions) async throws -> [UInt8]
  ) async throws(DBusError) {
    await connection.addObjectManager(at: root)
    try await connection.export(
      DBusInterface(
        "org.bluez.GattService1",
        properties: [
          DBusProperty("UUID", .string(GattPeerProfile.serviceUUID)),
          DBusProperty("Primary", .boolean(true)),
        ]), at: service)
    try await connection.export(
      DBusInterface(
        "org.bluez.GattCharacteristic1",
        methods: [
          DBusMethod("WriteValue", input: "aya{sv}") { call in
            let value = call.body.first?.bytes ?? []
            try await write(value, try CallOptions(call.body.dropFirst().first))
            return []
          }
        ],
        properties: [
          DBusProperty("UUID", .string(GattPeerProfile.inboxUUID)),
          DBusProperty("Service", .objectPath(service)),
          DBusProperty("Flags", .strings(["write"])),
        ]), at: inbox)
    try await connection.export(
      DBusInterface(
        "org.bluez.GattCharacteristic1",
        methods: [
          DBusMethod("ReadValue", input: "a{sv}", output: "ay") { call in
            [.bytes(try await read(try CallOptions(call.body.first)))]
          },
          // bluetoothd says when a device subscribes (no reply awaited); who listens is told
          // by the listen chunk instead, which names the device's tag.
          DBusMethod("StartNotify") { _ in [] },
          DBusMethod("StopNotify") { _ in [] },
        ],
        properties: [
          DBusProperty("UUID", .string(GattPeerProfile.outboxUUID)),
          DBusProperty("Service", .objectPath(service)),
          DBusProperty("Flags", .strings(["read", "notify"])),
        ]), at: outbox)
  }
}
