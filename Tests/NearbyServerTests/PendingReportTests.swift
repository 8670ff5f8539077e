@_spi(Resolver) import Core
import Foundation
@testable import ResolverClient
import Testing
import Tokens

/// What a client kept while the server was unreachable goes out within the limits of one
/// report (the server refuses more), oldest first, the rest in the next ones.
@Suite("Pending report")
struct PendingReportTests {
  @Test func whatIsKeptGoesOutWithinTheLimitsOfAReport() {
    var pending = PendingReport(capacity: 16_384)
    let sightings = (0..<3000).map {
      Sighting(token: Token(value: UInt64($0)), medium: .ble, time: Date())
    }
    let unsubscribe = (0..<300).map { _ in SubscriptionID.random() }
    pending.keep(Report(unsubscribe: unsubscribe, sightings: sightings))
    let fresh = Sighting(token: Token(value: 99_999), medium: .audio, time: Date())
    var sent: [Report] = [pending.merged(into: Report(sightings: [fresh]))]
    while !pending.isEmpty { sent.append(pending.merged(into: Report())) }
    #expect(sent.count == 3)  // 1023 + 1, then 1024, then 953 sightings
    for report in sent {
      #expect(report.sightings.count <= Report.maximumSightings)
      #expect(report.unsubscribe.count <= Report.maximumHandleChanges)
    }
    #expect(sent[0].sightings.last == fresh)
    #expect(sent.flatMap(\.sightings).filter { $0 != fresh } == sightings)
    #expect(sent.flatMap(\.unsubscribe) == unsubscribe)
  }
}
