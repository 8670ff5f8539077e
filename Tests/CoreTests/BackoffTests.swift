@_spi(Resolver) import Core
import Testing

/// Retries wait longer each time, up to a cap, at a random point in the second half of each
/// delay (so clients that failed together spread out), and start over after a success.
@Suite("Backoff")
struct BackoffTests {
  @Test func delaysDoubleToTheCapWithJitterAndReset() {
    var backoff = Backoff(initial: .seconds(1), maximum: .seconds(8))
    let nominal: [Duration] = [.seconds(1), .seconds(2), .seconds(4), .seconds(8), .seconds(8)]
    for step in nominal {
      let delay = backoff.next()
      #expect(delay >= step / 2 && delay <= step, "\(delay) for \(step)")
    }
    backoff.reset()
    #expect(backoff.next() <= .seconds(1))
    // Drawn, not fixed: a hundred first delays are not all the same.
    let firsts = Set(
      (0..<100).map { _ in
        var fresh = Backoff(initial: .seconds(1))
        return fresh.next()
      })
    #expect(firsts.count > 1)
  }
}
