import BLEBlueZ
import BlueZTestSupport
import DBus
import Foundation
import Logging

/// The BlueZ double that `Tools/scripts/test.sh` starts on the private system bus
/// (Tools/scripts/services/double-bluez.sh), steered through its control interface.
struct DoubleControl {
  static let path = try! DBusObjectPath("/org/nearby/BlueZDouble")
  static let interface = "org.nearby.BlueZDouble1"
  let connection: DBusConnection
  let bus: DBusBus

  static func connect() async throws -> DoubleControl {
    let bus = try DoubleBus.bus()
    let control = DoubleControl(connection: try await DBusConnection(bus), bus: bus)
    try await control.call("Reset")
    return control
  }

  @discardableResult
  func call(_ member: String, _ arguments: [DBusValue] = []) async throws -> [DBusValue] {
    try await connection.call(
      destination: "org.nearby.BlueZDouble", path: Self.path, interface: Self.interface,
      member: member, arguments, timeout: .seconds(5))
  }

  func setPowered(_ adapter: String, _ on: Bool) async throws {
    try await call("SetPowered", [.string(adapter), .boolean(on)])
  }

  /// The adverts registered on `adapter`: owner, path, service data.
  func adverts(_ adapter: String) async throws -> [[String: DBusValue]] {
    try await call("Adverts", [.string(adapter)]).first?.elements?.compactMap(\.stringDictionary)
      ?? []
  }

  func discoveryClients(_ adapter: String) async throws -> [String] {
    try await call("DiscoveryClients", [.string(adapter)]).first?.elements?.compactMap(\.string)
      ?? []
  }

  /// Waits until the double owns org.bluez again (after a restart).
  func waitForBlueZ() async throws -> Bool {
    let deadline = ContinuousClock.now + .seconds(10)
    while ContinuousClock.now < deadline {
      if try await connection.nameOwner(of: "org.bluez") != nil { return true }
      try await Task.sleep(for: .milliseconds(20))
    }
    return false
  }

  func medium(_ adapter: String, localName: String? = nil) async throws -> BlueZMedium {
    var configuration = BlueZConfiguration(bus: bus, adapter: adapter, localName: localName)
    configuration.scanWatchdog = .seconds(3)
    var logger = Logger(label: "test.bluez.\(adapter)")
    logger.logLevel = .warning
    return try await BlueZMedium(configuration: configuration, logger: logger)
  }

  func close() { connection.close() }
}
