public import Core
public import Strategy
public import Tokens

/// A medium on an ``Air``: transmits and scans in memory. Made by
/// ``Air/makeMedium(device:kind:returnPath:)`` or the
/// ``Core/MediumProvider/air(_:device:medium:returnPath:)`` factory.
public final class AirMedium: Medium {
  public let kind: DiscoveryMediums
  public let name: String
  public var capabilities: MediumCapabilities {
    kind == .ble ? [.broadcast, .scan, .beacons] : [.broadcast, .scan]
  }
  public let sightings: AsyncStream<Sighting>
  /// Beacons placed on the air (``Air/placeBeacon(_:frames:at:)``), for a BLE medium.
  public let beaconSightings: AsyncStream<BeaconSighting>
  public let statusUpdates: AsyncStream<MediumStatus>
  /// The simulated device this medium belongs to.
  public let device: String
  private let air: Air
  private let node: Int

  init(
    air: Air, node: Int, device: String, kind: DiscoveryMediums,
    sightings: AsyncStream<Sighting>, beaconSightings: AsyncStream<BeaconSighting>,
    statuses: AsyncStream<MediumStatus>
  ) {
    self.beaconSightings = beaconSightings
    self.air = air
    self.node = node
    self.device = device
    self.kind = kind
    self.name = "air \(kind) \(device)"
    self.sightings = sightings
    self.statusUpdates = statuses
  }

  public func transmit(_ token: Token) async throws { await air.transmit(node: node, token: token) }
  public func stopTransmitting() async { await air.stopTransmitting(node: node) }
  /// Recorded for ``Air/transmitPace(of:medium:)``; the air's rate does not change.
  public func setPace(_ pace: TransmitPace, for token: Token) async {
    await air.setPace(node: node, pace: pace, token: token)
  }
  public func startScanning() async throws { await air.startScanning(node: node) }
  public func stopScanning() async { await air.stopScanning(node: node) }
  public func shutdown() async { await air.detach(node: node) }

  /// Hears the air's beacons (BLE mediums only; `lowPower` changes nothing in memory).
  /// - Throws: `ManagerError.unsupported(_:)` (Core) for a medium that is not BLE.
  public func startBeaconScanning(lowPower: Bool) async throws {
    guard kind == .ble else { throw ManagerError.unsupported("\(name) cannot scan for beacons") }
    await air.startBeaconScanning(node: node)
  }

  public func stopBeaconScanning() async { await air.stopBeaconScanning(node: node) }
}

extension MediumProvider {
  /// A medium of `medium` for `device` on `air`; sightings of its token carry
  /// `returnPath`.
  public static func air(
    _ air: Air, device: String, medium: DiscoveryMediums, returnPath: PeerAddress? = nil
  ) -> MediumProvider {
    MediumProvider(name: "air \(medium) \(device)") { _ in
      await air.makeMedium(device: device, kind: medium, returnPath: returnPath)
    }
  }

  /// One air medium for each of `mediums` (default: BLE and audio) for `device`.
  public static func air(
    _ air: Air, device: String, mediums: DiscoveryMediums = .default
  ) -> [MediumProvider] {
    mediums.elements.map { .air(air, device: device, medium: $0) }
  }
}
