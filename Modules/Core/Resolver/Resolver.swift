/// Turns sightings into nearness and nearness into found/lost events (contract §3).
///
/// Two kinds exist: in-process (the `Resolution` module's `InProcessResolver`) and the HTTP
/// client of the resolver server. A ``MessageManager`` registers once, then reports; events
/// for its subscriptions come back in report answers and on the ``events(for:)`` stream.
///
/// Rules every resolver keeps: each event for a device carries the device's next sequence
/// number (starting at 1) and is sent exactly once, in an answer or on the stream, so that the
/// manager can restore their order; each answer's ``Directives/revision`` is larger than the
/// one before for that device.
@_spi(Resolver) public protocol Resolver: Sendable {
  /// Registers a new device for the project that `apiKey` belongs to.
  /// - Throws: ``ResolverError/invalidAPIKey`` for a key the resolver does not know.
  func register(apiKey: String) async throws -> DeviceCredentials

  /// Sends a report and returns the directives and the events it caused for this device.
  /// - Throws: ``ResolverError`` for unknown devices, a wrong secret or an invalid report.
  func report(_ report: Report, from device: DeviceCredentials) async throws -> ReportAnswer

  /// Events for the device that did not arrive in a report answer (caused by other devices
  /// or by time: lost, expiry). One consumer per device.
  /// - Throws: ``ResolverError`` for unknown devices or a wrong secret.
  func events(for device: DeviceCredentials) async throws -> AsyncStream<SequencedEvent>

  /// Removes the device with its publications and subscriptions; finishes its event stream.
  func unregister(_ device: DeviceCredentials) async throws

  /// The beacons of the device's project among `observed`, each with its attachments whose
  /// `namespace/type` matches one of `namespacedTypes` (`*` every type, `ns/*` every type of
  /// a namespace). Unknown ids are left out; an Eddystone-EID is matched against the
  /// registered EID beacons' current ids. Default: throws ``ResolverError/unavailable(_:)``.
  /// - Throws: ``ResolverError`` for unknown devices, a wrong secret, or a resolver that
  ///   cannot be reached.
  func beaconInfo(
    for observed: [BeaconID], namespacedTypes: [String], from device: DeviceCredentials
  ) async throws -> [BeaconInfo]

  /// ``beaconInfo(for:namespacedTypes:from:)`` for observations that may carry the telemetry
  /// heard with them, which a resolver keeping beacon diagnostics records. Default: the
  /// telemetry is left out and the ids are asked.
  /// - Throws: as ``beaconInfo(for:namespacedTypes:from:)``.
  func beaconInfo(
    observations: [BeaconObservation], namespacedTypes: [String], from device: DeviceCredentials
  ) async throws -> [BeaconInfo]
}

@_spi(Resolver) extension Resolver {
  /// Beacons unsupported: throws ``ResolverError/unavailable(_:)``.
  public func beaconInfo(
    for observed: [BeaconID], namespacedTypes: [String], from device: DeviceCredentials
  ) async throws -> [BeaconInfo] {
    throw ResolverError.unavailable("this resolver does not resolve beacons")
  }

  /// Asks for the observations' ids; their telemetry is not kept.
  public func beaconInfo(
    observations: [BeaconObservation], namespacedTypes: [String], from device: DeviceCredentials
  ) async throws -> [BeaconInfo] {
    try await beaconInfo(
      for: observations.map(\.id), namespacedTypes: namespacedTypes, from: device)
  }
}

/// Why a resolver refused a call.
public enum ResolverError: Error, Sendable, Hashable {
  /// The API key is empty or unknown.
  case invalidAPIKey
  /// No such device (never registered, or unregistered).
  case unknownDevice(DeviceID)
  /// The device secret does not match.
  case wrongSecret(DeviceID)
  /// The report was malformed; the text names the field and the rule.
  case invalidReport(String)
  /// The resolver could not be reached or answered an error.
  case unavailable(String)
}

extension ResolverError {
  /// Whether the resolver no longer knows the device (unknown device or wrong secret), so
  /// retrying cannot help.
  public var meansDeviceIsGone: Bool {
    switch self {
    case .unknownDevice, .wrongSecret: true
    default: false
    }
  }
}

extension ResolverError: CustomStringConvertible {
  public var description: String {
    switch self {
    case .invalidAPIKey: "the API key is empty or unknown to the resolver"
    case .unknownDevice(let id): "device \(id) is not registered with the resolver"
    case .wrongSecret(let id): "wrong secret for device \(id)"
    case .invalidReport(let why): "invalid report: \(why)"
    case .unavailable(let why): "resolver unavailable: \(why)"
    }
  }
}

/// Which resolver a manager uses. Modules add static factories: `Resolution` adds
/// `.embedded` and `.inProcess(_:)`; the server client adds `.server(_:)`.
public struct ResolverChoice: Sendable {
  /// A short description for logs.
  public var name: String
  /// Makes (or returns a shared) resolver.
  @_spi(Resolver) public var make: @Sendable () async throws -> any Resolver

  @_spi(Resolver) public init(
    name: String, make: @escaping @Sendable () async throws -> any Resolver
  ) {
    self.name = name
    self.make = make
  }

  /// A resolver you made yourself.
  @_spi(Resolver) public static func custom(_ resolver: any Resolver, name: String = "custom")
    -> ResolverChoice
  {
    ResolverChoice(name: name) { resolver }
  }
}
