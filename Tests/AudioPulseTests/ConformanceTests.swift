import AudioPulse
import Core
import MediumTestKit
import TestSupport
import Testing

/// The MediumTestKit conformance suite, through the real PulseAudio server: two mediums play
/// into one null sink and both record its monitor. One check at a time (one shared sink).
@Suite("PulseAudio medium conformance", .serialized)
struct ConformanceTests {
  @Test(.requires(.pulseaudio), arguments: MediumConformance.Check.allCases)
  func conformance(_ check: MediumConformance.Check) async throws {
    let conformance = MediumConformance(
      makePair: {
        MediumConformance.Pair(
          first: try PulseServer.medium(sink: "nearby"),
          second: try PulseServer.medium(sink: "nearby"))
      })
    try await conformance.run(check)
  }
}
