/// Delays between reconnection attempts: doubling from `initial` to `maximum`, each drawn at
/// random between half and all of it (so clients do not reconnect in step).
struct Backoff: Sendable {
  let initial: Duration
  let maximum: Duration
  private(set) var current: Duration

  init(initial: Duration = .milliseconds(250), maximum: Duration = .seconds(30)) {
    self.initial = initial
    self.maximum = maximum
    current = initial
  }

  mutating func next() -> Duration {
    let delay = current
    current = min(current * 2, maximum)
    return delay * Double.random(in: 0.5...1)
  }

  mutating func reset() { current = initial }
}
