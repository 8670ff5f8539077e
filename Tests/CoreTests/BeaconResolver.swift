@_spi(Resolver) import Core
import Foundation
import NearbyTesting
import Resolution
import Synchronization
import Tokens
import BeaconFrames

/// An in-process resolver that also answers for beacons from a table the test fills, and
/// counts the beacon lookups it gets. A test waits on what it recorded with
/// ``until(timeout:_:)``, woken at each lookup and each change of the held calls.
final class BeaconResolver: Resolver {
  private let inner: InProcessResolver
  private let table = Mutex<[BeaconID: BeaconInfo]>([:])
  private let lookups = Mutex(0)
  private let asked = Mutex<[BeaconID]>([])
  private let askedTypes = Mutex<[[String]]>([])
  private let telemetry = Mutex<[(BeaconID, [UInt8])]>([])
  private let failing = Mutex(false)
  private let gate = Mutex(Gate())
  private let changes = ChangeSignal()

  /// Calls held until the test lets them through (a slow network, made deterministic).
  private struct Gate {
    var holding = false
    var waiting: [CheckedContinuation<Void, Never>] = []
  }

  /// From now on `beaconInfo` calls wait, once counted, until ``release()``.
  func hold() { gate.withLock { $0.holding = true } }

  /// Lets the held calls through, and the later ones at once.
  func release() {
    let waiting = gate.withLock { gate in
      gate.holding = false
      defer { gate.waiting = [] }
      return gate.waiting
    }
    changes.changed()
    for continuation in waiting { continuation.resume() }
  }

  /// How many calls are held now.
  var heldCount: Int { gate.withLock { $0.waiting.count } }

  /// Waits until `condition` holds, asking it now and after each lookup, telemetry forwarded
  /// or change of the held calls, for at most `timeout`; returns whether it held. `condition`
  /// reads this resolver: `resolver.until { resolver.askedIDs.count == 2 }`.
  func until(
    timeout: Duration = defaultWaitBound, _ condition: () throws -> Bool
  ) async rethrows -> Bool {
    try await changes.wait(timeout: timeout, until: condition)
  }

  /// Makes `beaconInfo` throw `ResolverError.unavailable` (or answer again).
  func setUnreachable(_ on: Bool) { failing.withLock { $0 = on } }

  init() throws { inner = try InProcessResolver() }

  /// Registers a beacon: `id` is answered with these attachments under `name`.
  func register(_ id: BeaconID, name: String? = nil, attachments: [BeaconAttachment]) {
    table.withLock {
      $0[id] = BeaconInfo(observed: id, beaconName: name ?? "\(id)", attachments: attachments)
    }
  }

  func unregisterBeacon(_ id: BeaconID) { _ = table.withLock { $0.removeValue(forKey: id) } }

  /// How many times `beaconInfo` was called.
  var lookupCount: Int { lookups.withLock { $0 } }
  /// Every id asked for, in order (an id asked twice appears twice).
  var askedIDs: [BeaconID] { asked.withLock { $0 } }
  /// The telemetry that came with observations, in order.
  var forwardedTelemetry: [(id: BeaconID, frame: [UInt8])] { telemetry.withLock { $0 } }
  /// The namespaced types of each call, in order.
  var askedNamespacedTypes: [[String]] { askedTypes.withLock { $0 } }

  func register(apiKey: String) async throws -> DeviceCredentials {
    try await inner.register(apiKey: apiKey)
  }
  func report(_ report: Report, from device: DeviceCredentials) async throws -> ReportAnswer {
    try await inner.report(report, from: device)
  }
  func events(for device: DeviceCredentials) async throws -> AsyncStream<SequencedEvent> {
    try await inner.events(for: device)
  }
  func unregister(_ device: DeviceCredentials) async throws {
    try await inner.unregister(device)
  }

  func beaconInfo(
    for observed: [BeaconID], namespacedTypes: [String], from device: DeviceCredentials
  ) async throws -> [BeaconInfo] {
    lookups.withLock { $0 += 1 }
    asked.withLock { $0 += observed }
    askedTypes.withLock { $0.append(namespacedTypes) }
    changes.changed()
    await withCheckedContinuation { continuation in
      let held = gate.withLock { gate in
        if gate.holding { gate.waiting.append(continuation) }
        return gate.holding
      }
      if held { changes.changed() } else { continuation.resume() }
    }
    if failing.withLock({ $0 }) { throw ResolverError.unavailable("the test made it unreachable") }
    return table.withLock { table in observed.compactMap { table[$0] } }
  }

  func beaconInfo(
    observations: [BeaconObservation], namespacedTypes: [String], from device: DeviceCredentials
  ) async throws -> [BeaconInfo] {
    telemetry.withLock { sent in
      sent += observations.compactMap { observation in
        observation.telemetry.map { (observation.id, $0) }
      }
    }
    changes.changed()
    return try await beaconInfo(
      for: observations.map(\.id), namespacedTypes: namespacedTypes, from: device)
  }
}

/// Beacon frames for tests.
enum TestBeacons {
  static let namespace = try! BeaconBytes(hex: "edd1ebeac04e5defa017")
  static let uid = try! EddystoneUID(
    namespace: namespace, instance: BeaconBytes(hex: "0123456789ab"), txPower: -18)
  static let otherUID = try! EddystoneUID(
    namespace: BeaconBytes(hex: "00112233445566778899"), instance: BeaconBytes(hex: "aabbccddeeff"),
    txPower: -18)
  static let iBeacon = try! IBeacon(
    proximityUUID: BeaconBytes(hex: "e2c56db5dffb48d2b060d0f5a71096e0"), major: 1, minor: 2,
    measuredPower: -59)
  static func eid(_ hex: String) -> EddystoneEID {
    try! EddystoneEID(ephemeralID: BeaconBytes(hex: hex), txPower: -18)
  }

  static func attachment(_ name: String, _ namespace: String, _ type: String, _ text: String)
    -> BeaconAttachment
  {
    BeaconAttachment(name: name, namespace: namespace, type: type, data: Data(text.utf8))
  }
}
