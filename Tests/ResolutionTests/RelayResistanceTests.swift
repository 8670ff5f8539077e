@_spi(Resolver) import Core
import Foundation
@_spi(Resolver) import Resolution
import Strategy
import Testing
import Tokens

/// A token heard once must not make its hearer "near" for long: sightings are judged by the
/// time they were heard, a token resolves only for the time it was bound, and a device can
/// come near only so many devices a minute (issue 16, relay resistance).
@Suite("Relay resistance")
struct RelayResistanceTests {
  func heard(
    _ token: Token, at time: Date, by hearer: DeviceCredentials, _ f: EngineFixture
  ) throws -> [ResolverEvent] {
    let report = Report(sightings: [Sighting(token: token, medium: .ble, time: time)])
    return try f.report(report, from: hearer).mine
  }

  @Test func aSightingIsJudgedByTheTimeItWasHeard() throws {
    let f = EngineFixture()
    let a = try f.device()
    let b = try f.device()
    try f.publish("x", strategy: Strategy(ttl: .infinite), on: a)
    try f.subscribe(strategy: Strategy(ttl: .infinite), on: b)
    let token = try f.token(of: a)
    // Heard 31 s before it arrives: outside the 30 s window, ignored.
    #expect(try heard(token, at: f.now.addingTimeInterval(-31), by: b, f).isEmpty)
    // Heard 3 s in the future: ignored too.
    #expect(try heard(token, at: f.now.addingTimeInterval(3), by: b, f).isEmpty)
    #expect(f.counts.sightings == 0)
    // Heard 29 s ago, or 1 s ahead (clocks): counts.
    #expect(try heard(token, at: f.now.addingTimeInterval(-29), by: b, f).count == 1)
    #expect(f.counts.sightings == 1)
  }

  @Test func aRecordedTokenPlayedBackAfterItsLifetimeNamesNoOne() throws {
    let f = EngineFixture(tokenLifetime: .seconds(120), tokenGrace: .seconds(10))
    let a = try f.device()
    let b = try f.device()
    try f.publish("x", strategy: Strategy(ttl: .infinite), on: a)
    try f.subscribe(strategy: Strategy(ttl: .infinite), on: b)
    let recorded = try f.token(of: a)
    let bound = f.now
    // The device keeps reporting and gets new tokens; the recording is played back later,
    // claiming to be heard now.
    f.advance(131)
    _ = try f.token(of: a)
    _ = try f.sweep()
    #expect(try heard(recorded, at: f.now, by: b, f).isEmpty)
    #expect(f.counts.sightings == 0)
    // Honestly heard at the end of its grace and sent 20 s late, it still counts.
    #expect(try heard(recorded, at: bound.addingTimeInterval(129), by: b, f).count == 1)
  }

  @Test func aDeviceComesNearAtMostSoManyDevicesAMinute() throws {
    let f = EngineFixture(maximumNewNeighborsPerMinute: 3)
    let hearer = try f.device()
    try f.subscribe(strategy: Strategy(ttl: .infinite), on: hearer)
    var tokens: [Token] = []
    for index in 0..<5 {
      let other = try f.device()
      try f.publish("m\(index)", strategy: Strategy(ttl: .infinite), on: other)
      tokens.append(try f.token(of: other))
    }
    let all = Report(sightings: tokens.map { Sighting(token: $0, medium: .ble, time: f.now) })
    #expect(try f.report(all, from: hearer).mine.count == 3)
    #expect(f.counts.sightings == 3)
    // Heard every 5 s: the three it is near stay near (a fresh sighting starts nothing); the
    // other two wait for the next minute.
    var found: [Int: Int] = [:]
    for step in 1...12 {
      f.advance(5)
      let again = Report(sightings: tokens.map { Sighting(token: $0, medium: .ble, time: f.now) })
      found[step * 5] = try f.report(again, from: hearer).mine.count
      #expect(f.counts.sightings == (step * 5 < 60 ? 3 : 5), "at \(step * 5) s")
    }
    #expect(found.filter { $0.value > 0 } == [60: 2])
  }

  @Test func theDefaultsAreSeconds() throws {
    let defaults = ResolutionConfiguration()
    #expect(defaults.tokenLifetime == .seconds(120))
    #expect(defaults.tokenGrace == .seconds(10))
    #expect(defaults.sightingWindow == .seconds(30))
    #expect(defaults.maximumNewNeighborsPerMinute == 256)
    var bad = defaults
    bad.sightingWindow = .seconds(16 * 60)
    #expect(throws: ResolutionConfigurationError.self) { try bad.validate() }
  }
}
