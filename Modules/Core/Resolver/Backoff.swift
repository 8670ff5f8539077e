/// Delays between attempts at something that failed (reaching a resolver): doubling from
/// `initial` to `maximum`, each drawn at random between half and all of it, so that many
/// clients that failed together do not come back together.
@_spi(Resolver) public struct Backoff: Sendable {
  public let initial: Duration
  public let maximum: Duration
  public private(set) var current: Duration

  public init(initial: Duration = .milliseconds(250), maximum: Duration = .seconds(30)) {
    self.initial = initial
    self.maximum = max(maximum, initial)
    current = initial
  }

  /// The delay before the next attempt; the one after will be twice as long (up to the
  /// maximum).
  public mutating func next() -> Duration {
    let delay = current
    current = min(current * 2, maximum)
    return delay * Double.random(in: 0.5...1)
  }

  /// Back to `initial`: the last attempt succeeded.
  public mutating func reset() { current = initial }
}
