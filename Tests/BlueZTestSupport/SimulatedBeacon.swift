public import DBus
import Tokens
public import BeaconFrames

/// A BLE beacon simulated the way a Linux box makes itself a beacon: an exported
/// `org.bluez.LEAdvertisement1` (Type "broadcast") on a D-Bus connection of its own, registered
/// with an adapter's `LEAdvertisingManager1`. Eddystone frames go in `ServiceData` under
/// "FEAA" (with "FEAA" in `ServiceUUIDs`, as the Eddystone specification asks); iBeacon and
/// AltBeacon frames in `ManufacturerData` under their company identifier.
///
/// Against the BlueZ double, the other adapters hear it as a device; against a real
/// bluetoothd it is a real beacon. ``stop()`` unregisters it and closes its connection (the
/// advert also goes when the connection does).
public final class SimulatedBeacon: Sendable {
  /// The frame advertised.
  public let frame: BeaconFrame
  /// The adapter it advertises on, such as `hci1`.
  public let adapter: String
  private let connection: DBusConnection
  private let path: DBusObjectPath

  private static let root = try! DBusObjectPath("/org/nearby/simulatedbeacon")

  private init(
    frame: BeaconFrame, adapter: String, connection: DBusConnection, path: DBusObjectPath
  ) {
    self.frame = frame
    self.adapter = adapter
    self.connection = connection
    self.path = path
  }

  /// Exports the advert for `frame` and registers it on `adapter` of the bluetoothd (or
  /// double) on `bus`.
  /// - Throws: `DBusError` when the bus cannot be reached or BlueZ refuses the advert (such
  ///   as `org.bluez.Error.InvalidLength`).
  public static func start(
    _ frame: BeaconFrame, on adapter: String, bus: DBusBus, timeout: Duration = .seconds(5)
  ) async throws -> SimulatedBeacon {
    let connection = try await DBusConnection(bus)
    let path = try root.appending("advert0")
    do {
      try await connection.export(interface(frame), at: path)
      _ = try await connection.call(
        destination: "org.bluez", path: try DBusObjectPath("/org/bluez/\(adapter)"),
        interface: "org.bluez.LEAdvertisingManager1", member: "RegisterAdvertisement",
        [.objectPath(path), .vardict([:])], timeout: timeout)
    } catch {
      connection.close()
      throw error
    }
    return SimulatedBeacon(frame: frame, adapter: adapter, connection: connection, path: path)
  }

  /// Unregisters the advert and closes the connection.
  public func stop() async {
    _ = try? await connection.call(
      destination: "org.bluez", path: try DBusObjectPath("/org/bluez/\(adapter)"),
      interface: "org.bluez.LEAdvertisingManager1", member: "UnregisterAdvertisement",
      [.objectPath(path)])
    await connection.unexport(at: path)
    connection.close()
  }

  /// The `LEAdvertisement1` properties that carry `frame`.
  static func interface(_ frame: BeaconFrame) -> DBusInterface {
    var properties = [
      DBusProperty("Type", .string("broadcast")),
      DBusProperty("Includes", .strings([])),
    ]
    if let data = frame.serviceData {
      properties.append(DBusProperty("ServiceUUIDs", .strings(["FEAA"])))
      properties.append(DBusProperty("ServiceData", .vardict(["FEAA": .bytes(data)])))
    } else if let (companyID, data) = frame.manufacturerData {
      properties.append(
        DBusProperty(
          "ManufacturerData",
          .dictionary(
            key: .uint16, value: .variant,
            [DBusDictEntry(.uint16(companyID), .variant(.bytes(data)))])))
    }
    return DBusInterface(
      "org.bluez.LEAdvertisement1", methods: [DBusMethod("Release") { _ in [] }],
      properties: properties)
  }
}
