import Core
import MediumTestKit
import Testing
import Tokens
import NearbyTesting

@Suite("MediumConformance")
struct ConformanceTests {
  /// Every conformance check, on a fresh air with two devices 1 m apart, for each kind. The air
  /// runs on a manual clock that the checks' waits for silence move: `settle` is 10 advertising
  /// rounds and `quiet` 20, made at once.
  @Test(arguments: MediumConformance.Check.allCases, Kind.allCases)
  func airMediumConforms(_ check: MediumConformance.Check, _ kind: Kind) async throws {
    let conformance = MediumConformance(
      settle: .milliseconds(200), quiet: .milliseconds(400),
      makePair: {
        let clock = ManualClock()
        let air = makeAir(interval: .milliseconds(20), clock: clock)
        await air.place("alice", at: .origin)
        await air.place("bob", at: Air.Position(x: 1))
        return MediumConformance.Pair(
          first: await kind.medium(on: air, device: "alice"),
          second: await kind.medium(on: air, device: "bob"),
          elapse: { await clock.elapse($0) })
      })
    try await conformance.run(check)
  }

  /// A medium whose first status arrives before the suite's recorders start reading is still
  /// seen to report it (regression: the start time was taken after the recorders started).
  @Test func initialStatusBeforeTheChecksStartCounts() async throws {
    let conformance = MediumConformance(
      makePair: {
        let first = ScriptedMedium(kind: .ble, name: "early first")
        let second = ScriptedMedium(kind: .ble, name: "early second")
        return MediumConformance.Pair(first: first, second: second)
      })
    try await conformance.run(.reportsInitialStatus)
  }

  /// Checks a lone scripted medium passes: it needs no peer to hear it.
  @Test(arguments: [
    MediumConformance.Check.declaresBroadcastAndScan, .stopsAreIdempotent,
    .shutdownFinishesStreams,
  ])
  func scriptedMediumPassesChecksThatNeedNoPeer(_ check: MediumConformance.Check) async throws {
    let conformance = MediumConformance(
      settle: .milliseconds(50), quiet: .milliseconds(100),
      makePair: {
        MediumConformance.Pair(
          first: ScriptedMedium(kind: .ble, name: "first"),
          second: ScriptedMedium(kind: .ble, name: "second"))
      })
    try await conformance.run(check)
  }

  @Test func reportsAMediumThatHearsNothing() async throws {
    let conformance = MediumConformance(
      timeout: .milliseconds(150), settle: .milliseconds(10), quiet: .milliseconds(10),
      makePair: {
        MediumConformance.Pair(
          first: ScriptedMedium(kind: .audio, name: "deaf first"),
          second: ScriptedMedium(kind: .audio, name: "deaf second"))
      })
    let failure = await #expect(throws: ConformanceFailure.self) {
      try await conformance.run(.hearsPeerToken)
    }
    let thrown = try #require(failure)
    #expect(thrown.check == .hearsPeerToken)
    #expect(thrown.medium == "deaf first")
    #expect(thrown.description.contains("hearsPeerToken"))
  }

  @Test func reportsAMediumThatCannotBroadcast() async throws {
    let conformance = MediumConformance(
      timeout: .milliseconds(150),
      makePair: {
        MediumConformance.Pair(
          first: ScriptedMedium(kind: .ble, capabilities: [.scan]),
          second: ScriptedMedium(kind: .ble))
      })
    let failure = await #expect(throws: ConformanceFailure.self) {
      try await conformance.run(.declaresBroadcastAndScan)
    }
    #expect(failure?.check == .declaresBroadcastAndScan)
  }

  @Test func reportsAMediumOfSeveralKinds() async throws {
    let conformance = MediumConformance(
      timeout: .milliseconds(150),
      makePair: {
        MediumConformance.Pair(
          first: ScriptedMedium(kind: [.ble, .audio]), second: ScriptedMedium(kind: [.ble, .audio]))
      })
    await #expect(throws: ConformanceFailure.self) {
      try await conformance.run(.declaresBroadcastAndScan)
    }
  }

  @Test func checkNamesAreTheirRawValues() {
    #expect(MediumConformance.Check.allCases.count == 9)
    for check in MediumConformance.Check.allCases {
      #expect(check.description == check.rawValue)
    }
  }
}
