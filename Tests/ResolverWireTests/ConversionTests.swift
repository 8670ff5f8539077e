@_spi(Resolver) import Core
import Foundation
import ResolverAPI
@_spi(Resolver) import ResolverWire
import Strategy
import Testing
import Tokens

@Suite("Wire conversions")
struct ConversionTests {
  @Test func aReportSurvivesTheWireAndJSON() throws {
    let report = Report(
      publish: [
        PublicationSpec(
          id: .random(), message: Message(content: Data([0, 255, 7]), type: "t", namespace: "n.s"),
          strategy: try Strategy(mediums: .audio, mode: .scan, ttl: TTL(seconds: 12.5)))
      ],
      unpublish: [.random()],
      subscribe: [
        SubscriptionSpec(
          id: .random(), namespace: "n.s", type: nil,
          strategy: Strategy(mediums: .ble, ttl: .infinite), deviceTypes: .nearbyDevices)
      ],
      unsubscribe: [.random()],
      sightings: [
        Sighting(
          token: Token(value: 0xDEAD_BEEF_0000_0001), medium: .ble, rssi: -61, txPower: -12,
          time: Date(timeIntervalSince1970: 1_800_000_000))
      ])
    let wire = Components.Schemas.Report(report)
    let json = try JSONEncoder().encode(wire)
    let back = try JSONDecoder().decode(Components.Schemas.Report.self, from: json)
    #expect(try back.report() == report)
  }

  @Test func absentStrategyFieldsTakeTheDocumentedDefaults() throws {
    let wire = Components.Schemas.Strategy()
    #expect(try wire.strategy(field: "s") == .default)
  }

  @Test func everyEventKindSurvivesTheWire() throws {
    let message = Message(text: "hi", type: "t")
    let events: [ResolverEvent] = [
      .found(.random(), message), .lost(.random(), message), .subscriptionExpired(.random()),
      .publicationExpired(.random()),
    ]
    for (index, event) in events.enumerated() {
      let item = SequencedEvent(sequence: UInt64(index + 1), event: event)
      #expect(try Components.Schemas.Event(item).event() == item)
    }
  }

  @Test func badFieldsAreNamed() throws {
    var report = Components.Schemas.Report()
    report.unpublish = ["not-a-uuid"]
    #expect(throws: WireError("unpublish[0]: 'not-a-uuid' is not a UUID")) { try report.report() }
    report = .init(sightings: [.init(token: "xyz", medium: .ble, time: Date())])
    #expect(throws: WireError.self) { try report.report() }
    let strategy = Components.Schemas.Strategy(ttl: .case1(100_000))
    #expect(throws: WireError.self) { try strategy.strategy(field: "publish[0].strategy") }
    let event = Components.Schemas.Event(sequence: 1, kind: .found)
    #expect(throws: WireError("event.subscription: missing")) { try event.event() }
  }

  /// A report's lists are counted before anything is converted: over a limit it is refused
  /// as over the limit, naming the list and the limit.
  @Test func aReportOverItsListLimitsIsRefusedBeforeConversion() throws {
    let sighting = Sighting(token: Token(value: 1), medium: .ble, time: Date())
    let atLimit = Components.Schemas.Report(
      Report(sightings: Array(repeating: sighting, count: Report.maximumSightings)))
    #expect(try atLimit.report().sightings.count == Report.maximumSightings)
    var over = atLimit
    let extra = try #require(over.sightings?.first)
    over.sightings?.append(extra)
    do {
      _ = try over.report()
      Issue.record("\(Report.maximumSightings + 1) sightings were accepted")
    } catch let error as WireError {
      #expect(error.isOverLimit)
      #expect(error.description.contains("sightings: 1025 items; the limit is 1024"))
    }
    // Bad ids past the limit are not even looked at: the count is refused first.
    var handles = Components.Schemas.Report()
    handles.unpublish = Array(repeating: "not-a-uuid", count: Report.maximumHandleChanges + 1)
    #expect(throws: WireError.self) { try handles.report() }
    do { _ = try handles.report() } catch let error as WireError {
      #expect(error.isOverLimit)
      #expect(error.description.hasPrefix("unpublish: 257 items"))
    }
  }
}
