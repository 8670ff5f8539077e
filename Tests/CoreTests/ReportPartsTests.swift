@_spi(Resolver) import Core
import Foundation
import Strategy
import Testing
import Tokens

/// A report larger than a resolver accepts goes as several, each within the limits, that
/// together carry everything once.
@Suite("Report parts")
struct ReportPartsTests {
  @Test func aReportWithinTheLimitsIsOnePart() {
    let report = Report(unpublish: [.random()])
    #expect(report.parts == [report])
    #expect(Report().parts == [Report()])
  }

  @Test func aLargeReportIsSplitWithinTheLimits() {
    let publish = (0..<600).map { index in
      PublicationSpec(
        id: .random(), message: Message(text: "\(index)", type: "t"), strategy: .default)
    }
    let unsubscribe = (0..<3).map { _ in SubscriptionID.random() }
    let sightings = (0..<2000).map {
      Sighting(token: Token(value: UInt64($0)), medium: .ble, time: Date())
    }
    let report = Report(publish: publish, unsubscribe: unsubscribe, sightings: sightings)
    let parts = report.parts
    #expect(parts.count == 3)  // 600 publications in 256s; 2000 sightings in 1024s
    for part in parts {
      #expect(part.publish.count <= Report.maximumHandleChanges)
      #expect(part.sightings.count <= Report.maximumSightings)
    }
    #expect(parts.flatMap(\.publish) == publish)
    #expect(parts.flatMap(\.unsubscribe) == unsubscribe)
    #expect(parts.flatMap(\.sightings) == sightings)
  }
}
