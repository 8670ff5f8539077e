@_spi(Resolver) public import Core
import Foundation

/// Beacons of the in-process resolver: registered in code (there is no server to register
/// them on), resolved like the server does.
extension InProcessResolver {
  /// Registers a beacon for the project of `apiKey` (its text, as for devices).
  ///
  /// An Eddystone-EID beacon is registered by the id it broadcasts now (`id`) and its `eid`
  /// parameters, which must produce that id at their clock value (within one rotation period,
  /// at least 60 s). It is then found by every id it broadcasts, within that tolerance of its
  /// clock as it runs on from registration.
  /// - Returns: the beacon's name, `kind!hex` of `id`.
  /// - Throws: Core's `ResolverError.invalidAPIKey` for an empty key;
  ///   ``BeaconRegistrationError`` for a name the project has already, or EID parameters that
  ///   are missing, misplaced or do not produce `id`.
  @discardableResult
  public func registerBeacon(
    apiKey: String, id: BeaconID, eid: EddystoneEIDParameters? = nil,
    attachments: [BeaconAttachment] = []
  ) throws -> String {
    guard !apiKey.isEmpty else { throw ResolverError.invalidAPIKey }
    return try beacons.register(
      project: apiKey, id: id, eid: eid, attachments: attachments, now: now())
  }

  /// Adds an attachment to a registered beacon.
  /// - Throws: ``BeaconRegistrationError/unknownBeacon(_:)`` when the project has no such
  ///   beacon.
  public func addBeaconAttachment(
    apiKey: String, beaconName: String, _ attachment: BeaconAttachment
  ) throws {
    try beacons.attach(project: apiKey, beacon: beaconName, attachment)
  }

  /// Removes a beacon with its attachments; false if the project has no such beacon.
  @discardableResult
  public func removeBeacon(apiKey: String, name: String) -> Bool {
    beacons.remove(project: apiKey, name: name)
  }

  /// The registered beacons of the device's project that `observed` belong to, with their
  /// attachments matching `namespacedTypes` (`*`, `ns/*`, `ns/type`).
  /// - Throws: ``Core/ResolverError`` for an unknown device or a wrong secret.
  @_spi(Resolver) public func beaconInfo(
    for observed: [BeaconID], namespacedTypes: [String], from device: DeviceCredentials
  ) async throws -> [BeaconInfo] {
    let project = try project(of: device)
    return beacons.info(
      project: project, observed: observed, namespacedTypes: namespacedTypes, now: now())
  }
}
