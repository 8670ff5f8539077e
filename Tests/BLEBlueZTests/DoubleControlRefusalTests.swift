import BlueZTestSupport
import DBus
import TestSupport
import Testing
import NearbyTesting

extension BlueZDoubleTests {
  /// The double's control interface refuses loudly what it does not know, naming it: an
  /// unknown command (UnknownMethod), and a known one sent an argument of the wrong type or
  /// too few arguments (InvalidArgs, with the signature it expects) or naming an adapter the
  /// double lacks (InvalidArgs, with the name); nothing is defaulted and
  /// the double's state is untouched. Raw calls here, as no typed method can send them.
  @Test(.requires(.bluezDouble)) func controlRefusesUnknownCommandsAndWrongArguments()
    async throws
  {
    let control = try await DoubleControl.connect()
    defer { control.close() }
    func raw(_ member: String, _ arguments: [DBusValue]) async throws {
      _ = try await control.connection.call(
        destination: DoubleControl.name, path: DoubleControl.path,
        interface: DoubleControl.interface, member: member, arguments)
    }
    let unknown = await #expect(throws: DBusError.self) {
      try await raw("SetWarpDrive", [.boolean(true)])
    }
    #expect(unknown?.name == .unknownMethod)
    #expect(unknown?.message.contains("SetWarpDrive") == true, "\(String(describing: unknown))")

    let wrongType = await #expect(throws: DBusError.self) {
      try await raw("SetRSSI", [.string("hci0"), .string("-80")])
    }
    #expect(wrongType?.name == .invalidArgs)
    #expect(wrongType?.message.contains("SetRSSI") == true, "\(String(describing: wrongType))")
    #expect(wrongType?.message.contains("\"sn\"") == true, "\(String(describing: wrongType))")

    let missing = await #expect(throws: DBusError.self) {
      try await raw("RefuseMonitors", [.string("hci1")])
    }
    #expect(missing?.name == .invalidArgs)
    #expect(missing?.message.contains("RefuseMonitors") == true, "\(String(describing: missing))")
    #expect(missing?.message.contains("\"su\"") == true, "\(String(describing: missing))")

    let noSuchAdapter = await #expect(throws: DBusError.self) {
      try await raw("SetMonitorSupport", [.string("hci9"), .boolean(true)])
    }
    #expect(noSuchAdapter?.name == .invalidArgs)
    #expect(
      noSuchAdapter?.message.contains("SetMonitorSupport") == true
        && noSuchAdapter?.message.contains("hci9") == true,
      "\(String(describing: noSuchAdapter))")

    // Nothing was set: the monitor of a scan on hci1 is accepted (not refused), and the double
    // still answers.
    try await control.setMonitorSupport("hci1", true)
    let listener = try await control.medium("hci1")
    try await listener.startScanning()
    #expect(await eventually { (try? await control.monitors("hci1").count) == 1 })
    await listener.shutdown()
  }
}
