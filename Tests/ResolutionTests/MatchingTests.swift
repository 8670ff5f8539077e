@_spi(Resolver) import Core
@_spi(Resolver) import Resolution
import Strategy
import Testing
import Tokens

@Suite("Matching: who finds what")
struct MatchingTests {
  @Test("a subscriber that hears a publisher finds its message once")
  func foundOnce() throws {
    let f = EngineFixture()
    let alice = try f.device()
    let bob = try f.device()
    try f.publish("Alice", on: alice)
    let subscription = try f.subscribe(type: "name", on: bob)
    let events = try f.sighting(by: bob, of: alice)
    #expect(
      events == [
        DeviceEvent(
          device: bob.id, event: .found(subscription, Message(text: "Alice", type: "name")))
      ])
    f.advance(1)
    #expect(try f.sighting(by: bob, of: alice).isEmpty)
    #expect(try f.sighting(by: alice, of: bob).isEmpty)
  }

  @Test("the publisher hearing the subscriber is enough (either direction)")
  func reverseDirection() throws {
    let f = EngineFixture()
    let alice = try f.device()
    let bob = try f.device()
    try f.publish("Alice", on: alice)
    try f.subscribe(on: bob)
    #expect(try f.sighting(by: alice, of: bob).found == ["Alice"])
  }

  @Test(
    "set-top box: a publication that only scans audio reaches a subscriber that only broadcasts audio"
  )
  func setTopBox() throws {
    let f = EngineFixture()
    let phone = try f.device()
    let box = try f.device()
    let speaker = try f.device()
    try f.publish("Play", type: "cast", strategy: Strategy(mediums: .audio, mode: .scan), on: phone)
    try f.subscribe(type: "cast", strategy: Strategy(mediums: .audio, mode: .broadcast), on: box)
    try f.subscribe(type: "cast", strategy: Strategy(mediums: .audio, mode: .scan), on: speaker)
    #expect(try f.sighting(by: phone, of: box, on: .audio).found == ["Play"])
    // The speaker only scans and the phone does not broadcast: no sighting in either
    // direction qualifies, even if one is reported.
    #expect(try f.sighting(by: phone, of: speaker, on: .audio).isEmpty)
    #expect(try f.sighting(by: speaker, of: phone, on: .audio).isEmpty)
    // On the wrong medium nothing qualifies either.
    #expect(try f.sighting(by: phone, of: box, on: .ble).isEmpty)
  }

  @Test("mediums must overlap: BLE-only publication, audio-only subscription")
  func mediumsMustOverlap() throws {
    let f = EngineFixture()
    let a = try f.device()
    let b = try f.device()
    try f.publish("x", strategy: Strategy(mediums: .ble), on: a)
    try f.subscribe(strategy: Strategy(mediums: .audio), on: b)
    #expect(try f.sighting(by: b, of: a, on: .ble).isEmpty)
    #expect(try f.sighting(by: b, of: a, on: .audio).isEmpty)
  }

  @Test("earshot counts audio sightings only")
  func earshot() throws {
    let f = EngineFixture()
    let a = try f.device()
    let b = try f.device()
    try f.publish("x", on: a)
    try f.subscribe(strategy: Strategy(distanceType: .earshot), on: b)
    #expect(try f.sighting(by: b, of: a, on: .ble).isEmpty)
    #expect(try f.sighting(by: b, of: a, on: .audio).found == ["x"])
  }

  @Test("type and namespace filters")
  func filters() throws {
    let f = EngineFixture()
    let publisher = try f.device()
    let subscriber = try f.device()
    try f.publish("menu", type: "menu", namespace: "com.example", on: publisher)
    try f.publish("name", type: "name", namespace: "com.example", on: publisher)
    try f.publish("default", type: "menu", on: publisher)
    try f.subscribe(type: "menu", namespace: "com.example", on: subscriber)
    try f.subscribe(namespace: "com.example", on: subscriber)
    try f.subscribe(type: "menu", namespace: "org.other", on: subscriber)
    let found = try f.sighting(by: subscriber, of: publisher).found.sorted()
    #expect(found == ["menu", "menu", "name"])
  }

  @Test("projects are isolated")
  func projects() throws {
    let f = EngineFixture()
    let a = try f.device(project: "one")
    let b = try f.device(project: "two")
    try f.publish("secret", on: a)
    try f.subscribe(on: b)
    #expect(try f.sighting(by: b, of: a).isEmpty)
  }

  @Test("a device never finds its own messages; unknown and own tokens are ignored")
  func selfAndUnknown() throws {
    let f = EngineFixture()
    let a = try f.device()
    try f.publish("mine", on: a)
    try f.subscribe(on: a)
    #expect(try f.sighting(by: a, of: a).isEmpty)
    let (mine, others) = try f.report(
      Report(sightings: [Sighting(token: Token.random(), medium: .ble, time: f.now)]), from: a)
    #expect(mine.isEmpty && others.isEmpty)
    #expect(f.counts.sightings == 0)
  }

  @Test("a handle added while a sighting is fresh is matched at once")
  func lateHandles() throws {
    let f = EngineFixture()
    let a = try f.device()
    let b = try f.device()
    try f.sighting(by: b, of: a)
    let subscription = try f.subscribe(on: b)
    let id = PublicationID.random()
    let (mine, others) = try f.report(
      Report(publish: [PublicationSpec(id: id, message: Message(text: "late"), strategy: .default)]
      ),
      from: a)
    #expect(mine.isEmpty)
    #expect(
      others == [DeviceEvent(device: b.id, event: .found(subscription, Message(text: "late")))])
  }

  @Test("the same message from two publishers is found once and lost when both are gone")
  func sameMessageTwice() throws {
    let f = EngineFixture()
    let a = try f.device()
    let b = try f.device()
    let c = try f.device()
    let first = try f.publish("hello", on: a)
    let second = try f.publish("hello", on: b)
    try f.subscribe(on: c)
    #expect(try f.sighting(by: c, of: a).found == ["hello"])
    #expect(try f.sighting(by: c, of: b).isEmpty)
    #expect(try f.report(Report(unpublish: [first]), from: a).others.isEmpty)
    #expect(try f.report(Report(unpublish: [second]), from: b).others.lost == ["hello"])
  }
}
