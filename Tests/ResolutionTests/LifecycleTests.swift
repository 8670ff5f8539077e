@_spi(Resolver) import Core
@_spi(Resolver) import Resolution
import Strategy
import Testing
import Tokens

@Suite("Lost, expiry, tokens and cleanup")
struct LifecycleTests {
  @Test("lost exactly lostAfter after the last qualifying sighting")
  func lostAfterSilence() throws {
    let f = EngineFixture(lostAfter: .seconds(10))
    let a = try f.device()
    let b = try f.device()
    try f.publish("Alice", on: a)
    try f.subscribe(on: b)
    #expect(try f.sighting(by: b, of: a).found == ["Alice"])
    f.advance(4)
    try f.sighting(by: b, of: a)
    f.advance(9)
    #expect(try f.sweep().isEmpty)
    f.advance(1)
    #expect(try f.sweep().lost == ["Alice"])
    #expect(f.counts.deliveries == 0 && f.counts.sightings == 0)
    // Heard again: found again.
    #expect(try f.sighting(by: b, of: a).found == ["Alice"])
  }

  @Test("a sighting on another medium keeps the message")
  func otherMediumKeepsIt() throws {
    let f = EngineFixture(lostAfter: .seconds(10))
    let a = try f.device()
    let b = try f.device()
    try f.publish("Alice", on: a)
    try f.subscribe(on: b)
    try f.sighting(by: b, of: a, on: .ble)
    f.advance(5)
    try f.sighting(by: b, of: a, on: .audio)
    f.advance(5)
    #expect(try f.sweep().isEmpty)
    f.advance(5)
    #expect(try f.sweep().lost == ["Alice"])
  }

  @Test("unpublish makes subscribers lose the message at once")
  func unpublish() throws {
    let f = EngineFixture()
    let a = try f.device()
    let b = try f.device()
    let publication = try f.publish("Alice", on: a)
    try f.subscribe(on: b)
    try f.sighting(by: b, of: a)
    let (_, others) = try f.report(Report(unpublish: [publication]), from: a)
    #expect(others.lost == ["Alice"])
    #expect(f.counts.publications == 0 && f.counts.deliveries == 0)
  }

  @Test("publication TTL: subscribers lose it, the owner gets publicationExpired")
  func publicationExpiry() throws {
    let f = EngineFixture(lostAfter: .seconds(100))
    let a = try f.device()
    let b = try f.device()
    let publication = try f.publish("brief", strategy: Strategy(ttl: try TTL(seconds: 5)), on: a)
    try f.subscribe(on: b)
    try f.sighting(by: b, of: a)
    f.advance(4)
    #expect(try f.sweep().isEmpty)
    f.advance(1)
    let events = try f.sweep()
    #expect(events.lost == ["brief"])
    #expect(events.contains(DeviceEvent(device: a.id, event: .publicationExpired(publication))))
    #expect(f.counts.publications == 0)
  }

  @Test("subscription TTL: the owner gets subscriptionExpired and no lost")
  func subscriptionExpiry() throws {
    let f = EngineFixture(lostAfter: .seconds(100))
    let a = try f.device()
    let b = try f.device()
    try f.publish("x", on: a)
    let subscription = try f.subscribe(strategy: Strategy(ttl: try TTL(seconds: 3)), on: b)
    try f.sighting(by: b, of: a)
    f.advance(3)
    #expect(try f.sweep() == [DeviceEvent(device: b.id, event: .subscriptionExpired(subscription))])
    #expect(f.counts.subscriptions == 0 && f.counts.deliveries == 0)
  }

  @Test("infinite TTL never expires")
  func infinite() throws {
    let f = EngineFixture(lostAfter: .seconds(86_400))
    let a = try f.device()
    try f.publish("forever", strategy: Strategy(ttl: .infinite), on: a)
    f.advance(10 * 86_400)
    #expect(try f.sweep().isEmpty)
    #expect(f.counts.publications == 1)
  }

  @Test("tokens rotate after their lifetime; the old one resolves for the grace period")
  func rotation() throws {
    let f = EngineFixture(lostAfter: .seconds(5), tokenLifetime: .seconds(900))
    let a = try f.device()
    let b = try f.device()
    try f.publish("x", strategy: Strategy(ttl: .infinite), on: a)
    try f.subscribe(strategy: Strategy(ttl: .infinite), on: b)
    let old = try f.token(of: a)
    f.advance(899)
    #expect(try f.token(of: a) == old)
    f.advance(1)
    let (answer, _) = try f.engine.report(Report(), from: a, now: f.now)
    #expect(answer.directives.token != old)
    #expect(answer.directives.tokenExpiresIn == 900)
    // Old token still heard within the grace period.
    let (heard, _) = try f.engine.report(
      Report(sightings: [Sighting(token: old, medium: .ble, time: f.now)]), from: b, now: f.now)
    #expect(heard.events.count == 1)
    f.advance(61)
    _ = try f.sweep()
    let (late, _) = try f.engine.report(
      Report(sightings: [Sighting(token: old, medium: .ble, time: f.now)]), from: b, now: f.now)
    #expect(late.events.isEmpty)
  }

  @Test("directives follow the strategies of the device's handles")
  func directives() throws {
    let f = EngineFixture()
    let a = try f.device()
    var answer = try f.engine.report(Report(), from: a, now: f.now).answer
    #expect(answer.directives.broadcast.isEmpty && answer.directives.scan.isEmpty)
    let publication = try f.publish("x", strategy: Strategy(mediums: .audio, mode: .scan), on: a)
    try f.subscribe(strategy: Strategy(mediums: .ble, mode: .broadcast), on: a)
    answer = try f.engine.report(Report(), from: a, now: f.now).answer
    #expect(answer.directives.broadcast == .ble)
    #expect(answer.directives.scan == .audio)
    answer = try f.engine.report(Report(unpublish: [publication]), from: a, now: f.now).answer
    #expect(answer.directives.scan.isEmpty)
  }

  @Test("bad credentials and invalid reports are refused with the reason")
  func refusals() throws {
    let f = EngineFixture()
    let a = try f.device()
    #expect(throws: ResolverError.wrongSecret(a.id)) {
      try f.engine.report(Report(), from: DeviceCredentials(id: a.id, secret: "nope"), now: f.now)
    }
    let ghost = DeviceID.random()
    #expect(throws: ResolverError.unknownDevice(ghost)) {
      try f.engine.report(Report(), from: DeviceCredentials(id: ghost, secret: ""), now: f.now)
    }
    let tooBig = Message(content: .init(repeating: 0, count: Message.maximumContentBytes + 1))
    do {
      try f.report(
        Report(publish: [PublicationSpec(id: .random(), message: tooBig, strategy: .default)]),
        from: a)
      Issue.record("an over-limit message was accepted")
    } catch let error as ResolverError {
      guard case .invalidReport(let why) = error else {
        Issue.record("unexpected \(error)")
        return
      }
      #expect(why.contains("102400"))
    }
    #expect(f.counts.publications == 0)
  }

  @Test("unregistering removes everything and tells subscribers")
  func unregister() throws {
    let f = EngineFixture()
    let a = try f.device()
    let b = try f.device()
    try f.publish("Alice", on: a)
    try f.subscribe(on: a)
    try f.subscribe(on: b)
    try f.sighting(by: b, of: a)
    try f.sighting(by: a, of: b)
    let events = try f.engine.unregister(a, now: f.now)
    #expect(events.lost == ["Alice"])
    let counts = f.counts
    #expect(counts.devices == 1 && counts.publications == 0 && counts.subscriptions == 1)
    #expect(counts.deliveries == 0 && counts.sightings == 0)
  }

  @Test("events are numbered per device in order; every answer has a higher revision")
  func sequencesAndRevisions() throws {
    let f = EngineFixture(lostAfter: .seconds(10))
    let a = try f.device()
    let b = try f.device()
    try f.publish("one", on: a)
    try f.publish("two", on: a)
    try f.subscribe(on: b)
    let token = try f.token(of: a)
    let (answer, _) = try f.engine.report(
      Report(sightings: [Sighting(token: token, medium: .ble, time: f.now)]), from: b, now: f.now)
    #expect(answer.events.map(\.sequence) == [1, 2])
    f.advance(10)
    let lost = try f.engine.sweep(now: f.now)
    #expect(lost.map(\.sequence) == [3, 4])
    #expect(lost.allSatisfy { $0.device == b.id })
    let first = try f.engine.report(Report(), from: a, now: f.now).answer.directives.revision
    let second = try f.engine.report(Report(), from: a, now: f.now).answer.directives.revision
    #expect(second > first)
  }

  @Test("an id reused with other content, or a sighting on an unknown medium, is refused")
  func conflictingReports() throws {
    let f = EngineFixture()
    let a = try f.device()
    let id = PublicationID.random()
    let spec = PublicationSpec(id: id, message: Message(text: "x"), strategy: .default)
    try f.report(Report(publish: [spec]), from: a)
    try f.report(Report(publish: [spec]), from: a)  // the same again: no change
    var changed = spec
    changed.message = Message(text: "y")
    #expect(throws: ResolverError.self) { try f.report(Report(publish: [changed]), from: a) }
    let odd = Sighting(token: Token.random(), medium: DiscoveryMediums(rawValue: 1 << 5))
    #expect(throws: ResolverError.self) { try f.report(Report(sightings: [odd]), from: a) }
    #expect(f.counts.publications == 1)
  }

  @Test("a rotated token of an unregistered device resolves to nothing")
  func unregisteredOldToken() throws {
    let f = EngineFixture(tokenLifetime: .seconds(60))
    let a = try f.device()
    let b = try f.device()
    try f.subscribe(strategy: Strategy(ttl: .infinite), on: b)
    let old = try f.token(of: a)
    f.advance(60)
    #expect(try f.token(of: a) != old)  // rotated; the old one is still in its grace period
    _ = try f.engine.unregister(a, now: f.now)
    try f.report(Report(sightings: [Sighting(token: old, medium: .ble, time: f.now)]), from: b)
    #expect(f.counts.sightings == 0)
  }

  @Test("configurations out of range are refused with the field named")
  func configuration() {
    #expect(throws: ResolutionConfigurationError.self) {
      try ResolutionConfiguration(lostAfter: .zero).validate()
    }
    #expect(throws: ResolutionConfigurationError.self) {
      try ResolutionConfiguration(tokenLifetime: .seconds(901)).validate()
    }
    do {
      _ = try InProcessResolver(configuration: .init(tokenGrace: .seconds(-1)))
      Issue.record("a negative grace was accepted")
    } catch {
      #expect("\(error)".contains("tokenGrace"))
    }
  }
}
