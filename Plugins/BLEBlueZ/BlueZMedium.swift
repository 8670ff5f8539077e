public import Core
import DBus
public import Logging
public import Strategy
public import Tokens

/// Bluetooth LE through BlueZ: advertises our BLE token frame with an exported
/// `org.bluez.LEAdvertisement1` registered at `LEAdvertisingManager1`, and scans with a
/// pattern monitor (`AdvertisementMonitorManager1`) where the adapter offers one, else with
/// `Adapter1.SetDiscoveryFilter` (LE, duplicates reported) and `StartDiscovery`, turning
/// devices' service data into sightings. It also scans for BLE beacons (Eddystone, iBeacon,
/// AltBeacon) on request, independently of token scanning: see
/// ``startBeaconScanning(lowPower:)``.
///
/// Made by ``Core/MediumProvider/bluez(adapter:bus:)``. It follows power changes, adapter loss
/// and bluetoothd restarts by itself: the advert and the scan come back when BlueZ does.
/// Problems show on ``statusUpdates``: no adapter or powered off → `.poweredOff`; D-Bus
/// `AccessDenied` → `.permissionDenied` with the fix; bluetoothd absent → `.unavailable`.
/// All work happens on an internal actor and the D-Bus connection's own thread.
public final class BlueZMedium: Medium {
  public let kind: DiscoveryMediums = .ble
  public let capabilities: MediumCapabilities = [.broadcast, .scan, .background, .beacons]
  public let sightings: AsyncStream<Sighting>
  public let statusUpdates: AsyncStream<MediumStatus>
  /// Every advertising report heard while scanning, ours or not, when
  /// ``BlueZConfiguration/reportsAllAdvertisements`` is on (else it finishes at once). Keeps
  /// the newest 4096 unread.
  public let advertisements: AsyncStream<BlueZAdvertisement>
  /// One sighting per beacon frame in each advertising report heard while beacon scanning
  /// (an RSSI-only report repeats the frames last seen from that device). Keeps the newest
  /// 4096 unread; finished by ``shutdown()``.
  public let beaconSightings: AsyncStream<BeaconSighting>
  public let name: String
  let engine: BlueZEngine

  /// Connects to the bus and to BlueZ.
  /// - Throws: ``DBus/DBusError`` when the bus itself cannot be reached. BlueZ being absent,
  ///   powered off or refusing access is not an error here: it shows on ``statusUpdates``.
  public init(configuration: BlueZConfiguration = .init(), logger: Logger) async throws {
    let connection = try await DBusConnection(configuration.bus, logger: logger)
    let (sightings, sightingsContinuation) = AsyncStream.makeStream(
      of: Sighting.self, bufferingPolicy: .bufferingNewest(4096))
    let (statuses, statusContinuation) = AsyncStream.makeStream(
      of: MediumStatus.self, bufferingPolicy: .bufferingNewest(16))
    let (advertisements, advertisementsContinuation) = AsyncStream.makeStream(
      of: BlueZAdvertisement.self, bufferingPolicy: .bufferingNewest(4096))
    if !configuration.reportsAllAdvertisements { advertisementsContinuation.finish() }
    let (beaconSightings, beaconContinuation) = AsyncStream.makeStream(
      of: BeaconSighting.self, bufferingPolicy: .bufferingNewest(4096))
    self.beaconSightings = beaconSightings
    self.advertisements = advertisements
    self.sightings = sightings
    self.statusUpdates = statuses
    name = "bluez \(configuration.adapter ?? "default adapter")"
    engine = BlueZEngine(
      configuration: configuration, connection: connection, logger: logger,
      sightings: sightingsContinuation, statuses: statusContinuation,
      advertisements: advertisementsContinuation, beaconSightings: beaconContinuation)
    do {
      try await engine.start()
    } catch {
      connection.close()
      throw error
    }
  }

  /// Advertises `token` (replacing the previous one).
  /// - Throws: ``BlueZMediumError``: `advertisementTooLong` before BlueZ sees the advert;
  ///   `poweredOff`, `permissionDenied`, `bluetoothdUnavailable`; or BlueZ's error (such as
  ///   `org.bluez.Error.NotPermitted` "Maximum advertisements reached"). The medium keeps
  ///   the wish and advertises once BlueZ is usable again.
  public func transmit(_ token: Token) async throws { try await engine.transmit(token) }

  public func stopTransmitting() async { await engine.stopTransmitting() }

  /// Starts discovery. Throws like ``transmit(_:)``; the wish is kept and retried on recovery.
  public func startScanning() async throws { try await engine.startScanning() }

  public func stopScanning() async { await engine.stopScanning() }

  /// Starts reporting beacon frames on ``beaconSightings``, or changes how. With `lowPower`,
  /// and where the adapter offers `AdvertisementMonitorManager1` with "or_patterns", a pattern
  /// monitor (Eddystone service data, iBeacon and AltBeacon manufacturer data, plus our token
  /// pattern while token scanning) scans passively; otherwise LE discovery scans actively for
  /// both. Token scanning keeps running across the change.
  /// - Throws: like ``transmit(_:)``; the wish is kept and retried on recovery.
  public func startBeaconScanning(lowPower: Bool) async throws {
    try await engine.startBeaconScanning(lowPower: lowPower)
  }

  /// Stops reporting beacon frames; token scanning stays as it was.
  public func stopBeaconScanning() async { await engine.stopBeaconScanning() }

  /// Unregisters the advert, stops scanning, closes the D-Bus connection, finishes streams.
  public func shutdown() async { await engine.shutdown() }

  /// The medium's current status (the last one on ``statusUpdates``).
  public func status() async -> MediumStatus? { await engine.currentStatus }

  /// The adapters BlueZ offers: name, power, advertising instances (for `nearby ble status`).
  public func adapters() async -> [BlueZAdapterInfo] {
    let chosen = await engine.chosenAdapter
    return await engine.adapterList().map {
      BlueZAdapterInfo(
        name: $0.name, path: $0.path.rawValue, powered: $0.powered, canAdvertise: $0.hasAdvertising,
        supportedAdvertisements: $0.supportedInstances, activeAdvertisements: $0.activeInstances,
        inUse: $0.path == chosen)
    }
  }
}

/// One adapter as ``BlueZMedium/adapters()`` reports it.
public struct BlueZAdapterInfo: Sendable, Hashable, Codable {
  public var name: String
  public var path: String
  public var powered: Bool
  public var canAdvertise: Bool
  public var supportedAdvertisements: Int?
  public var activeAdvertisements: Int?
  /// Whether the medium uses this adapter.
  public var inUse: Bool
}

/// One advertising report as BlueZ gave it (``BlueZMedium/advertisements``).
public struct BlueZAdvertisement: Sendable, Hashable {
  /// The device's address, such as `C0:DE:00:00:01:01`.
  public var address: String
  /// The received signal strength in dBm.
  public var rssi: Int?
  /// The advertised TX power in dBm, when the advert carries it.
  public var txPower: Int?
  /// Service data by service UUID (lower case).
  public var serviceData: [String: [UInt8]]
  /// Manufacturer data by company identifier.
  public var manufacturerData: [UInt16: [UInt8]]
  /// Our token, when the service data carries our frame.
  public var token: Token?
}
