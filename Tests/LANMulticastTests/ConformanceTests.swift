import Core
import LANMulticast
import MediumTestKit
import Testing

@Suite("LAN medium conformance on loopback")
struct ConformanceTests {
  @Test(arguments: MediumConformance.Check.allCases)
  func conforms(_ check: MediumConformance.Check) async throws {
    let conformance = MediumConformance(
      settle: .milliseconds(300), quiet: .milliseconds(500),
      makePair: {
        let configuration = Loopback.configuration()
        return MediumConformance.Pair(
          first: try LANMulticastMedium(configuration: configuration),
          second: try LANMulticastMedium(configuration: configuration))
      })
    try await conformance.run(check)
  }
}
