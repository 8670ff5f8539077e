public import BLEBlueZ
public import DBus
import Logging
import TestSupport
import NearbyTesting

/// The BlueZ double that `Tools/scripts/test.sh` starts on the private system bus
/// (Tools/scripts/services/double-bluez.sh), steered through its control interface
/// `org.nearby.BlueZDouble1` at `/org/nearby/BlueZDouble`: one typed method per control
/// command, so a test cannot misspell a command or send it arguments of the wrong type. The
/// double refuses an unknown command (UnknownMethod) or arguments that do not match the
/// command's signature (InvalidArgs), naming the command.
public struct DoubleControl: Sendable {
  /// The double's bus name, object path and control interface.
  public static let name = "org.nearby.BlueZDouble"
  public static let path = try! DBusObjectPath("/org/nearby/BlueZDouble")
  public static let interface = "org.nearby.BlueZDouble1"

  /// The connection the commands go over (close it with ``close()``).
  public let connection: DBusConnection
  /// The private system bus the double is on.
  public let bus: DBusBus

  /// Connects to the double's bus and, when `reset` (the default), resets it: every test that
  /// depends on the double's state starts so.
  /// - Throws: ``DoubleMissing`` when the tests run without the services of `test.sh`.
  public static func connect(reset: Bool = true) async throws -> DoubleControl {
    let bus = try DoubleBus.bus()
    let control = DoubleControl(connection: try await DBusConnection(bus), bus: bus)
    if reset { try await control.reset() }
    return control
  }

  /// Connects, runs `body` with the control, closes: for a test that steers the double once.
  public static func once(_ body: (DoubleControl) async throws -> Void) async throws {
    let control = try await connect(reset: false)
    defer { control.close() }
    try await body(control)
  }

  public func close() { connection.close() }

  // MARK: Life

  /// `Reset`: back to the state the double starts in (adapters present and powered, no
  /// adverts, discovery, monitors, GATT apps or devices; every setting below at its default).
  public func reset() async throws { try await call("Reset") }

  /// `Restart`: the double drops its bus connection about 20 ms after answering and comes back
  /// `downFor` later with fresh state, as a bluetoothd restart looks to clients.
  public func restart(downFor: Duration) async throws {
    try await call("Restart", [.uint32(Self.milliseconds(downFor))])
  }

  /// Waits, for at most 10 s, until the double owns org.bluez again (after a restart);
  /// returns whether it does.
  /// - Throws: ``DBus/DBusError`` when the bus cannot be asked.
  public func waitForBlueZ() async throws -> Bool {
    try await eventually(timeout: .seconds(10), interval: .milliseconds(20)) {
      try await connection.nameOwner(of: "org.bluez") != nil
    }
  }

  // MARK: Adapters and power

  /// `SetPowered`: powers an adapter on or off, as a user (or rfkill) would.
  public func setPowered(_ adapter: String, _ on: Bool) async throws {
    try await call("SetPowered", [.string(adapter), .boolean(on)])
  }

  /// `RemoveAdapter`: the controller goes away (Powered false, then InterfacesRemoved).
  public func removeAdapter(_ adapter: String) async throws {
    try await call("RemoveAdapter", [.string(adapter)])
  }

  /// `AddAdapter`: the controller comes back, published as bluetoothd does.
  public func addAdapter(_ adapter: String) async throws {
    try await call("AddAdapter", [.string(adapter)])
  }

  /// `SetAccessDenied`: while on, every call to BlueZ (not to the control interface) is
  /// answered `org.freedesktop.DBus.Error.AccessDenied`, as the bus's policy would.
  public func setAccessDenied(_ on: Bool) async throws {
    try await call("SetAccessDenied", [.boolean(on)])
  }

  /// `FailNext`: the next `count` calls of the BlueZ method `member` fail with the error
  /// `errorName` instead of running.
  public func failNext(_ member: String, with errorName: String, count: UInt32 = 1) async throws {
    try await call("FailNext", [.string(member), .string(errorName), .uint32(count)])
  }

  // MARK: Adverts

  /// `SetSupportedInstances`: the adapter's `SupportedInstances` (how many adverts it takes).
  public func setSupportedInstances(_ adapter: String, _ count: UInt8) async throws {
    try await call("SetSupportedInstances", [.string(adapter), .byte(count)])
  }

  /// `Adverts`: the adverts registered on `adapter`, each with its `Owner`, `Path`, `Type`,
  /// `ServiceData` and `Length`.
  public func adverts(_ adapter: String) async throws -> [[String: DBusValue]] {
    try await call("Adverts", [.string(adapter)]).first?.elements?.compactMap(\.stringDictionary)
      ?? []
  }

  // MARK: Discovery and the air

  /// `DiscoveryClients`: the bus names with a discovery session on `adapter`, sorted.
  public func discoveryClients(_ adapter: String) async throws -> [String] {
    try await call("DiscoveryClients", [.string(adapter)]).first?.elements?.compactMap(\.string)
      ?? []
  }

  /// `StallDiscovery`: the adapter's discovery sessions go silent until discovery is started
  /// again.
  public func stallDiscovery(_ adapter: String) async throws {
    try await call("StallDiscovery", [.string(adapter)])
  }

  /// `SetRSSI`: the base RSSI of every device heard from `advertiser`'s adverts (±2 dB of
  /// jitter); 127 is HCI's "not available", sent as it is; 0 goes back to the distance formula.
  public func setRSSI(advertiser: String, rssi: Int16) async throws {
    try await call("SetRSSI", [.string(advertiser), .int16(rssi)])
  }

  /// `SetTemporaryTimeout`: how long a device may go unheard before it is removed
  /// (bluetoothd's `TemporaryTimeout`); the double's default is zero.
  public func setTemporaryTimeout(_ timeout: Duration) async throws {
    try await call("SetTemporaryTimeout", [.uint32(Self.milliseconds(timeout))])
  }

  /// `SetHeardOnce`: the VM's emulated air, where a still device is heard only when created and
  /// comes back `gap` after it is removed; off, every repeat is heard.
  public func setHeardOnce(_ on: Bool, gap: Duration = .zero) async throws {
    try await call("SetHeardOnce", [.boolean(on), .uint32(Self.milliseconds(gap))])
  }

  /// `SetReportInterval`: how often a heard device is reported (100 ms by default).
  public func setReportInterval(_ interval: Duration) async throws {
    try await call("SetReportInterval", [.uint32(Self.milliseconds(interval))])
  }

  // MARK: Monitors

  /// `SetMonitorSupport`: adds or removes `AdvertisementMonitorManager1` on an adapter.
  public func setMonitorSupport(_ adapter: String, _ on: Bool) async throws {
    try await call("SetMonitorSupport", [.string(adapter), .boolean(on)])
  }

  /// `RefuseMonitors`: the adapter's next `count` monitors are refused (bluetoothd calls
  /// `Release` on them instead of `Activate`).
  public func refuseMonitors(adapter: String, count: UInt32) async throws {
    try await call("RefuseMonitors", [.string(adapter), .uint32(count)])
  }

  /// `SetQuietMonitors`: a device heard only through a monitor is reported once, then stays
  /// silent (bluetoothd with a pattern monitor and no discovery session).
  public func setQuietMonitors(_ on: Bool) async throws {
    try await call("SetQuietMonitors", [.boolean(on)])
  }

  /// `Monitors`: the object paths of the monitors registered on `adapter`, sorted.
  public func monitors(_ adapter: String) async throws -> [DBusObjectPath] {
    try (try await call("Monitors", [.string(adapter)]).first?.elements ?? []).map { value in
      guard let path = value.objectPath else { throw Self.unexpected("Monitors", value) }
      return path
    }
  }

  /// One pattern of an "or_patterns" monitor: where in the AD structure the content starts,
  /// the AD type, the content.
  public struct MonitorPattern: Sendable, Hashable {
    public var start: UInt8
    public var type: UInt8
    public var content: [UInt8]

    public init(start: UInt8, type: UInt8, content: [UInt8]) {
      self.start = start
      self.type = type
      self.content = content
    }
  }

  /// `MonitorPatterns`: every pattern of the monitors registered on `adapter`, in a stable
  /// order (by monitor path).
  public func monitorPatterns(_ adapter: String) async throws -> [MonitorPattern] {
    try (try await call("MonitorPatterns", [.string(adapter)]).first?.elements ?? []).map {
      value in
      guard case .structure(let fields) = value, fields.count == 3,
        case .byte(let start) = fields[0], case .byte(let type) = fields[1],
        let content = fields[2].bytes
      else { throw Self.unexpected("MonitorPatterns", value) }
      return MonitorPattern(start: start, type: type, content: content)
    }
  }

  // MARK: GATT

  /// `SetGattMTU`: the ATT MTU of the links made from now on (23…517).
  public func setGattMTU(_ mtu: UInt16) async throws {
    try await call("SetGattMTU", [.uint16(mtu)])
  }

  /// What `GattStats` counts since the last reset.
  public struct GattStats: Sendable, Hashable {
    /// LE links made (`Device1.Connect`).
    public var connects: UInt32
    /// `ReadValue` calls carried to apps.
    public var reads: UInt32
    /// `WriteValue` calls carried to apps.
    public var writes: UInt32

    public init(connects: UInt32, reads: UInt32, writes: UInt32) {
      self.connects = connects
      self.reads = reads
      self.writes = writes
    }
  }

  /// `GattStats`: links made, reads and writes carried, since the last reset.
  public func gattStats() async throws -> GattStats {
    let reply = try await call("GattStats")
    guard reply.count == 3, case .uint32(let connects) = reply[0],
      case .uint32(let reads) = reply[1], case .uint32(let writes) = reply[2]
    else { throw Self.unexpected("GattStats", .structure(reply)) }
    return GattStats(connects: connects, reads: reads, writes: writes)
  }

  /// `GattOutOfSync`: the links whose peripheral is `adapter` become change-unaware, as a
  /// real owner's server takes a hearer that missed its database's change: each read and
  /// write on them fails with ATT error 0x12 (Database Out of Sync) until the link drops.
  /// Returns how many links.
  @discardableResult
  public func gattOutOfSync(_ adapter: String) async throws -> Int {
    let reply = try await call("GattOutOfSync", [.string(adapter)])
    guard reply.count == 1, case .uint32(let count) = reply[0] else {
      throw Self.unexpected("GattOutOfSync", .structure(reply))
    }
    return Int(count)
  }

  /// `GattApps`: the roots of the GATT applications registered on `adapter`, sorted.
  public func gattApps(_ adapter: String) async throws -> [DBusObjectPath] {
    try (try await call("GattApps", [.string(adapter)]).first?.elements ?? []).map { value in
      guard let path = value.objectPath else { throw Self.unexpected("GattApps", value) }
      return path
    }
  }

  // MARK: Media

  /// A ``BlueZMedium`` on one of the double's adapters (scan watchdog 3 s, warnings logged).
  public func medium(_ adapter: String, localName: String? = nil) async throws -> BlueZMedium {
    var configuration = BlueZConfiguration(bus: bus, adapter: adapter, localName: localName)
    configuration.scanWatchdog = .seconds(3)
    var logger = Logger(label: "test.bluez.\(adapter)")
    logger.logLevel = .warning
    return try await BlueZMedium(configuration: configuration, logger: logger)
  }

  // MARK: The wire

  /// Calls a control command by name: only the typed methods above use it.
  @discardableResult
  private func call(_ member: String, _ arguments: [DBusValue] = []) async throws -> [DBusValue] {
    try await connection.call(
      destination: Self.name, path: Self.path, interface: Self.interface, member: member,
      arguments)
  }

  private static func milliseconds(_ duration: Duration) -> UInt32 {
    let (seconds, attoseconds) = duration.components
    return UInt32(clamping: seconds * 1000 + attoseconds / 1_000_000_000_000_000)
  }

  private static func unexpected(_ command: String, _ value: DBusValue) -> DBusError {
    DBusError(.invalidArgs, "\(interface).\(command) answered an unexpected value: \(value)")
  }
}
