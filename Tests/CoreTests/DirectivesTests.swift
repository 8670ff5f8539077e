@_spi(Resolver) import Core
import Testing
import Tokens

/// Whatever a resolver answers, the manager waits a sane time before asking again.
@Suite("Directives")
struct DirectivesTests {
  func delay(_ seconds: Double) -> Duration {
    Directives(
      revision: 1, token: Token(value: 1), tokenExpiresIn: seconds, broadcast: .ble, scan: .ble
    ).refreshDelay
  }

  @Test func theRefreshDelayStaysWithinItsRange() {
    #expect(delay(900) == .seconds(900))
    #expect(delay(0.3) == .milliseconds(300))
    #expect(delay(0) == .milliseconds(250))  // not a report every 10 ms
    #expect(delay(-5) == .milliseconds(250))
    #expect(delay(1e300) == .seconds(3600))  // `.seconds(1e300)` would trap
    #expect(delay(.infinity) == .seconds(3600))
    #expect(delay(.nan) == .seconds(3600))
  }
}
