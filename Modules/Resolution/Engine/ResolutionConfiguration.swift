public import Foundation

/// The timing rules of resolution, and how many handles one device may keep.
public struct ResolutionConfiguration: Sendable, Hashable {
  /// A message is lost when no qualifying sighting arrived for this long. Default 10 s.
  public var lostAfter: Duration
  /// How long a token is transmitted before the device gets a new one. Default 2 min: what
  /// the mediums need is far less (a BLE advertisement and a LAN datagram carry it at once,
  /// the audio modem in about a second), and a token recorded and played back elsewhere
  /// resolves only until its lifetime and grace are over. The contract allows up to 15 min;
  /// each rotation costs the device one report.
  public var tokenLifetime: Duration
  /// How long after its lifetime an old token still resolves, for a device still sending it
  /// while it asks for the next. Default 10 s.
  public var tokenGrace: Duration
  /// The most live publications one device may keep, and the most subscriptions: a report
  /// that would go past either is refused as invalid (one that lowers the count never is).
  /// Default ``defaultMaximumHandlesPerDevice`` (256) each: every live handle costs work on
  /// each encounter. The resolver server keeps the default (its policy for every client); an
  /// ``InProcessResolver`` that holds many handles on one device (a benchmark, a simulation)
  /// can raise it.
  public var maximumHandlesPerDevice: Int
  /// How long before its report arrives a sighting may have been heard (its time, on the
  /// resolver's clock: a server report's `sentAt` takes the device's clock out): older
  /// sightings, and any heard more than ``futureTolerance`` in the future, are ignored. A
  /// token resolves for the time it was heard, not the time it arrives. Default 30 s: a
  /// client sends what it hears at once.
  public var sightingWindow: Duration
  /// The most devices one device may newly come near in a minute; sightings that would start
  /// more are ignored. Default ``defaultMaximumNewNeighborsPerMinute`` (256).
  public var maximumNewNeighborsPerMinute: Int
  /// A device that has not reported for this long is removed with its handles (its
  /// neighbours get `lost`); nil keeps devices until they unregister. Default 30 days.
  public var deviceExpiry: Duration?

  /// Each parameter sets the property of the same name; ``validate()`` checks their ranges.
  /// - Parameters:
  ///   - lostAfter: default 10 s.
  ///   - tokenLifetime: default 2 min (see the property).
  ///   - tokenGrace: default 10 s.
  ///   - maximumHandlesPerDevice: publications, and subscriptions, one device may keep;
  ///     default ``defaultMaximumHandlesPerDevice``.
  ///   - sightingWindow: default 30 s.
  ///   - maximumNewNeighborsPerMinute: default ``defaultMaximumNewNeighborsPerMinute``.
  ///   - deviceExpiry: default 30 days; nil keeps devices until they unregister.
  public init(
    lostAfter: Duration = .seconds(10), tokenLifetime: Duration = .seconds(120),
    tokenGrace: Duration = .seconds(10),
    maximumHandlesPerDevice: Int = Self.defaultMaximumHandlesPerDevice,
    sightingWindow: Duration = .seconds(30),
    maximumNewNeighborsPerMinute: Int = Self.defaultMaximumNewNeighborsPerMinute,
    deviceExpiry: Duration? = .seconds(30 * 86_400)
  ) {
    self.lostAfter = lostAfter
    self.tokenLifetime = tokenLifetime
    self.tokenGrace = tokenGrace
    self.maximumHandlesPerDevice = maximumHandlesPerDevice
    self.sightingWindow = sightingWindow
    self.maximumNewNeighborsPerMinute = maximumNewNeighborsPerMinute
    self.deviceExpiry = deviceExpiry
  }

  /// The earliest time a sighting may have been heard to count, for a report arriving `now`.
  public func earliestHeard(now: Date) -> Date {
    now.addingTimeInterval(-sightingWindow.seconds)
  }

  /// Whether a sighting heard at `heardAt` counts in a report arriving `now`: heard no
  /// earlier than ``earliestHeard(now:)`` and no more than ``futureTolerance`` ahead. The
  /// engine ignores the others (a recording played back, a report kept too long).
  public func counts(heardAt: Date, now: Date) -> Bool {
    heardAt >= earliestHeard(now: now)
      && heardAt.timeIntervalSince(now) <= Self.futureTolerance.seconds
  }
}

extension ResolutionConfiguration {
  /// The default ``maximumHandlesPerDevice``: 256 publications and 256 subscriptions per
  /// device, the resolver server's policy.
  public static let defaultMaximumHandlesPerDevice = 256
  /// The default ``maximumNewNeighborsPerMinute``: 256.
  public static let defaultMaximumNewNeighborsPerMinute = 256
  /// The longest token lifetime the contract allows: 15 minutes.
  public static let maximumTokenLifetime = Duration.seconds(15 * 60)
  /// The longest `lostAfter` and `tokenGrace`: one day.
  public static let maximumWindow = Duration.seconds(86_400)
  /// How far in the resolver's future a sighting's time may be (clocks and rounding): 2 s.
  public static let futureTolerance = Duration.seconds(2)
  /// The longest `sightingWindow`: 15 min.
  public static let maximumSightingWindow = Duration.seconds(15 * 60)

  /// Checks the ranges: `0 < lostAfter ≤ 1 day`, `0 < tokenLifetime ≤ 15 min`,
  /// `0 ≤ tokenGrace ≤ 1 day`, `maximumHandlesPerDevice ≥ 1`, `0 < sightingWindow ≤ 15 min`,
  /// `maximumNewNeighborsPerMinute ≥ 1`, `deviceExpiry` (if set) at least 1 min.
  /// - Throws: ``ResolutionConfigurationError`` naming the field and its range.
  public func validate() throws(ResolutionConfigurationError) {
    guard lostAfter > .zero, lostAfter <= Self.maximumWindow else {
      throw .outOfRange(field: "lostAfter", value: lostAfter, range: "more than 0 s, at most 1 day")
    }
    guard tokenLifetime > .zero, tokenLifetime <= Self.maximumTokenLifetime else {
      throw .outOfRange(
        field: "tokenLifetime", value: tokenLifetime, range: "more than 0 s, at most 15 min")
    }
    guard tokenGrace >= .zero, tokenGrace <= Self.maximumWindow else {
      throw .outOfRange(field: "tokenGrace", value: tokenGrace, range: "0 s to 1 day")
    }
    guard maximumHandlesPerDevice >= 1 else {
      throw .countOutOfRange(
        field: "maximumHandlesPerDevice", value: maximumHandlesPerDevice, range: "at least 1")
    }
    guard sightingWindow > .zero, sightingWindow <= Self.maximumSightingWindow else {
      throw .outOfRange(
        field: "sightingWindow", value: sightingWindow, range: "more than 0 s, at most 15 min")
    }
    guard maximumNewNeighborsPerMinute >= 1 else {
      throw .countOutOfRange(
        field: "maximumNewNeighborsPerMinute", value: maximumNewNeighborsPerMinute,
        range: "at least 1")
    }
    if let deviceExpiry, deviceExpiry < .seconds(60) {
      throw .outOfRange(field: "deviceExpiry", value: deviceExpiry, range: "at least 1 min")
    }
  }
}

/// Why a ``ResolutionConfiguration`` was rejected.
public enum ResolutionConfigurationError: Error, Sendable, Hashable, CustomStringConvertible {
  case outOfRange(field: String, value: Duration, range: String)
  case countOutOfRange(field: String, value: Int, range: String)

  public var description: String {
    switch self {
    case .outOfRange(let field, let value, let range):
      "\(field) \(value) is out of range: it must be \(range)"
    case .countOutOfRange(let field, let value, let range):
      "\(field) \(value) is out of range: it must be \(range)"
    }
  }
}
