public import Core
import Foundation
public import NearbyTesting
public import Strategy
import Synchronization
public import Tokens
public import BeaconFrames

/// A medium driven by the test: it hears what the test says it hears (``hear(_:rssi:txPower:)``, and
/// with the `.beacons` capability ``hear(beacon:address:rssi:)``), reports the statuses the
/// test sets, and remembers what the manager asked of it; ``until(timeout:_:)`` waits for the
/// manager to ask something, woken at each request.
public final class ScriptedMedium: Medium {
  public let kind: DiscoveryMediums
  public let name: String
  public let capabilities: MediumCapabilities
  public let sightings: AsyncStream<Sighting>
  public let statusUpdates: AsyncStream<MediumStatus>
  public let beaconSightings: AsyncStream<BeaconSighting>

  private struct State {
    var transmitting: Token?
    var scanning = false
    var beaconScanning = false
    var transmitCalls = 0
    var startScanningCalls = 0
  }
  // A Mutex guards what the manager set; the continuations are thread-safe themselves.
  private let state = Mutex(State())
  private let changes = ChangeSignal()
  private let sightingsContinuation: AsyncStream<Sighting>.Continuation
  private let statusContinuation: AsyncStream<MediumStatus>.Continuation
  private let beaconContinuation: AsyncStream<BeaconSighting>.Continuation

  /// A medium of `kind`. `bufferSize` bounds sightings not yet read by the manager.
  public init(
    kind: DiscoveryMediums, name: String? = nil,
    capabilities: MediumCapabilities = [.broadcast, .scan], bufferSize: Int = 1 << 16
  ) {
    self.kind = kind
    self.name = name ?? "scripted \(kind)"
    self.capabilities = capabilities
    (sightings, sightingsContinuation) = AsyncStream.makeStream(
      of: Sighting.self, bufferingPolicy: .bufferingNewest(bufferSize))
    (statusUpdates, statusContinuation) = AsyncStream.makeStream(
      of: MediumStatus.self, bufferingPolicy: .bufferingNewest(16))
    (beaconSightings, beaconContinuation) = AsyncStream.makeStream(
      of: BeaconSighting.self, bufferingPolicy: .bufferingNewest(bufferSize))
    statusContinuation.yield(.ready)
  }

  /// The token the manager asked it to transmit, if any.
  public var transmittedToken: Token? { state.withLock { $0.transmitting } }
  /// Whether the manager asked it to scan.
  public var isScanning: Bool { state.withLock { $0.scanning } }
  /// How often `transmit` succeeded.
  public var transmitCalls: Int { state.withLock { $0.transmitCalls } }
  /// How often `startScanning` succeeded.
  public var startScanningCalls: Int { state.withLock { $0.startScanningCalls } }

  /// Waits until `condition` holds, asking it now and after each request of the manager
  /// (transmit, scan, their stops, a shutdown), for at most `timeout`; returns whether it
  /// held. `condition` reads this medium: `ble.until { ble.transmittedToken != nil }`.
  public func until(
    timeout: Duration = defaultWaitBound, _ condition: () throws -> Bool
  ) async rethrows -> Bool {
    try await changes.wait(timeout: timeout, until: condition)
  }

  /// Changes what the manager set and wakes the waits of ``until(timeout:_:)``.
  private func update(_ body: (inout State) -> Void) {
    state.withLock { body(&$0) }
    changes.changed()
  }

  /// Reports hearing `token` now, if scanning and not our own token; returns whether it did.
  @discardableResult
  public func hear(_ token: Token, rssi: Double? = -60, txPower: Int? = nil) -> Bool {
    let (scanning, own) = state.withLock { ($0.scanning, $0.transmitting == token) }
    guard scanning, !own else { return false }
    sightingsContinuation.yield(Sighting(token: token, medium: kind, rssi: rssi, txPower: txPower))
    return true
  }

  /// Reports hearing a beacon frame now, if the manager asked it to scan for beacons; returns
  /// whether it did.
  @discardableResult
  public func hear(beacon frame: BeaconFrame, address: String, rssi: Int? = -60) -> Bool {
    guard state.withLock({ $0.beaconScanning }) else { return false }
    beaconContinuation.yield(BeaconSighting(address: address, frame: frame, rssi: rssi))
    return true
  }

  /// Reports a status, as a real medium would on power-off or refused access.
  public func setStatus(_ status: MediumStatus) { statusContinuation.yield(status) }

  /// Like a real medium's system call, it fails when the calling task is cancelled.
  public func transmit(_ token: Token) async throws {
    try Task.checkCancellation()
    update {
      $0.transmitting = token
      $0.transmitCalls += 1
    }
  }
  public func stopTransmitting() async { update { $0.transmitting = nil } }
  public func startScanning() async throws {
    try Task.checkCancellation()
    update {
      $0.scanning = true
      $0.startScanningCalls += 1
    }
  }
  public func stopScanning() async { update { $0.scanning = false } }
  /// Scans for beacons when the medium has the `.beacons` capability.
  /// - Throws: `ManagerError.unsupported(_:)` (Core) without it.
  public func startBeaconScanning(lowPower: Bool) async throws {
    guard capabilities.contains(.beacons) else {
      throw ManagerError.unsupported("\(name) cannot scan for beacons")
    }
    update { $0.beaconScanning = true }
  }
  public func stopBeaconScanning() async { update { $0.beaconScanning = false } }
  public func shutdown() async {
    update { $0 = State() }
    sightingsContinuation.finish()
    beaconContinuation.finish()
    statusContinuation.finish()
  }
}

extension MediumProvider {
  /// Hands `medium` to the manager (one manager per scripted medium).
  public static func scripted(_ medium: ScriptedMedium) -> MediumProvider {
    MediumProvider(name: medium.name) { _ in medium }
  }
}
