/// The timing rules of resolution, and how many handles one device may keep.
public struct ResolutionConfiguration: Sendable, Hashable {
  /// A message is lost when no qualifying sighting arrived for this long. Default 10 s.
  public var lostAfter: Duration
  /// How long a token is transmitted before the device gets a new one. Default 15 min,
  /// the longest the contract allows.
  public var tokenLifetime: Duration
  /// How long an old token still resolves after its lifetime, for sightings in flight.
  /// Default 60 s.
  public var tokenGrace: Duration
  /// The most live publications one device may keep, and the most subscriptions: a report
  /// that would go past either is refused as invalid (one that lowers the count never is).
  /// Default 256 each: every live handle costs work on each encounter.
  public var maximumHandlesPerDevice: Int

  public init(
    lostAfter: Duration = .seconds(10), tokenLifetime: Duration = .seconds(15 * 60),
    tokenGrace: Duration = .seconds(60), maximumHandlesPerDevice: Int = 256
  ) {
    self.lostAfter = lostAfter
    self.tokenLifetime = tokenLifetime
    self.tokenGrace = tokenGrace
    self.maximumHandlesPerDevice = maximumHandlesPerDevice
  }
}

extension ResolutionConfiguration {
  /// The longest token lifetime the contract allows: 15 minutes.
  public static let maximumTokenLifetime = Duration.seconds(15 * 60)
  /// The longest `lostAfter` and `tokenGrace`: one day.
  public static let maximumWindow = Duration.seconds(86_400)

  /// Checks the ranges: `0 < lostAfter ≤ 1 day`, `0 < tokenLifetime ≤ 15 min`,
  /// `0 ≤ tokenGrace ≤ 1 day`, `maximumHandlesPerDevice ≥ 1`.
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

extension Duration {
  /// This duration in seconds, as a `Double`.
  var seconds: Double {
    let (whole, fraction) = components
    return Double(whole) + Double(fraction) / 1e18
  }
}
