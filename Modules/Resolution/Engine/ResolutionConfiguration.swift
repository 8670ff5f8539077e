/// The timing rules of resolution.
public struct ResolutionConfiguration: Sendable, Hashable {
  /// A message is lost when no qualifying sighting arrived for this long. Default 10 s.
  public var lostAfter: Duration
  /// How long a token is transmitted before the device gets a new one. Default 15 min,
  /// the longest the contract allows.
  public var tokenLifetime: Duration
  /// How long an old token still resolves after its lifetime, for sightings in flight.
  /// Default 60 s.
  public var tokenGrace: Duration

  public init(
    lostAfter: Duration = .seconds(10), tokenLifetime: Duration = .seconds(15 * 60),
    tokenGrace: Duration = .seconds(60)
  ) {
    self.lostAfter = lostAfter
    self.tokenLifetime = tokenLifetime
    self.tokenGrace = tokenGrace
  }
}

extension Duration {
  /// This duration in seconds, as a `Double`.
  var seconds: Double {
    let (whole, fraction) = components
    return Double(whole) + Double(fraction) / 1e18
  }
}
