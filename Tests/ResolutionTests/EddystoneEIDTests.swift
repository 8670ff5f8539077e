import Core
import Foundation
import Resolution
import Testing
import Tokens

/// The Eddystone-EID specification publishes no numeric test vectors (neither
/// `eid-computation.md` nor `eidtools.py` does). These were computed independently with
/// Python's `cryptography` package (AES-128-ECB, following eid-computation.md step by step):
///
///     tk  = AES(ik, 00×11 ‖ ff ‖ 00 00 ‖ (t >> 16) as 2 bytes BE)
///     eid = AES(tk, 00×11 ‖ K ‖ ((t >> K) << K) as 4 bytes BE)[:8]
private let vectors:
  [(key: String, exponent: Int, time: UInt32, temporaryKey: String, eid: String)] = [
    (
      "000102030405060708090a0b0c0d0e0f", 10, 65280, "68d14ef25b6abcc46b96568081ec8a52",
      "3439c83a6564bfdf"
    ),
    (
      "000102030405060708090a0b0c0d0e0f", 10, 66000, "89b9b57c9f9b105a9541f31958492269",
      "ec31ae4cb8abc2d8"
    ),
    (
      "e2c56db5dffb48d2b060d0f5a71096e0", 0, 0, "3cd40dfc92682e47920dcef3dd0dd01e",
      "86fa4d7184d3d2cf"
    ),
    (
      "e2c56db5dffb48d2b060d0f5a71096e0", 15, 4_294_967_295, "97fe9931413227c6f5330743c6b0f652",
      "f16dd2fa40de0f7c"
    ),
    (
      "ffeeddccbbaa99887766554433221100", 5, 1_234_567, "2accdebf1eddc7fd8256e091abe84b2e",
      "64c7a3d5f0a9ed70"
    ),
  ]

/// Bytes from even-length hex (test input, known good).
func hexBytes(_ hex: String) -> [UInt8] {
  guard let bytes = Hex.decode(hex) else { preconditionFailure("bad hex literal \(hex)") }
  return bytes
}

@Suite("Eddystone-EID")
struct EddystoneEIDTests {
  @Test(arguments: vectors.indices)
  func computesTheIndependentVectors(_ index: Int) throws {
    let vector = vectors[index]
    let generator = try EddystoneEIDGenerator(
      identityKey: hexBytes(vector.key), rotationExponent: vector.exponent)
    #expect(generator.temporaryKey(beaconTime: vector.time) == hexBytes(vector.temporaryKey))
    #expect(generator.eid(beaconTime: vector.time) == hexBytes(vector.eid))
  }

  @Test func theIdHoldsForItsWholePeriodAndTheTemporaryKeyForItsEpoch() throws {
    let generator = try EddystoneEIDGenerator(
      identityKey: hexBytes(vectors[0].key), rotationExponent: 10)
    // 65280 is in the period 64512..<65536 (K = 10).
    #expect(generator.eid(beaconTime: 64512) == hexBytes("3439c83a6564bfdf"))
    #expect(generator.eid(beaconTime: 65535) == hexBytes("3439c83a6564bfdf"))
    #expect(generator.eid(beaconTime: 65536) != hexBytes("3439c83a6564bfdf"))
    let periods = generator.eids(overlapping: 64000...66000)
    #expect(periods.map(\.periodStart) == [63488, 64512, 65536])
    #expect(periods[1].eid == hexBytes("3439c83a6564bfdf"))
    #expect(periods[2].eid == generator.eid(beaconTime: 66000))
  }

  @Test func badParametersAreNamed() {
    #expect(throws: EddystoneEIDError.self) {
      try EddystoneEIDGenerator(identityKey: [1, 2, 3], rotationExponent: 1)
    }
    #expect(throws: EddystoneEIDError.self) {
      try EddystoneEIDGenerator(identityKey: .init(repeating: 0, count: 16), rotationExponent: 16)
    }
  }

  @Test func registrationChecksTheBroadcastIdWithinTheTolerance() throws {
    let now = Date(timeIntervalSince1970: 1_800_000_000)
    let key = hexBytes(vectors[0].key)
    let parameters = EddystoneEIDParameters(
      identityKey: key, rotationExponent: 10, clockValue: 65280)
    _ = try parameters.register(eid: hexBytes("3439c83a6564bfdf"), at: now)
    // The next period's id is within one period of the clock: accepted.
    _ = try parameters.register(eid: hexBytes("ec31ae4cb8abc2d8"), at: now)
    let wrongKey = EddystoneEIDParameters(
      identityKey: hexBytes(vectors[4].key), rotationExponent: 10, clockValue: 65280)
    #expect(throws: EddystoneEIDError.self) {
      try wrongKey.register(eid: hexBytes("3439c83a6564bfdf"), at: now)
    }
    let farClock = EddystoneEIDParameters(
      identityKey: key, rotationExponent: 10, clockValue: 65280 + 10 * 1024)
    #expect(throws: EddystoneEIDError.self) {
      try farClock.register(eid: hexBytes("3439c83a6564bfdf"), at: now)
    }
  }

  @Test func theIndexResolvesNowThePreviousPeriodButNotAFarOne() throws {
    let registeredAt = Date(timeIntervalSince1970: 1_800_000_000)
    let registration = try EddystoneEIDRegistration(
      identityKey: hexBytes(vectors[0].key), rotationExponent: 10, clockValue: 65280,
      registeredAt: registeredAt)
    let later = registeredAt.addingTimeInterval(3 * 1024)
    let index = EddystoneEIDIndex(beacons: [(beacon: "b", registration: registration)], at: later)
    let nowTime = UInt32(65280 + 3 * 1024)
    #expect(index.beacon(for: registration.eid(at: later), at: later) == "b")
    #expect(
      index.beacon(for: registration.generator.eid(beaconTime: nowTime - 1024), at: later) == "b")
    #expect(
      index.beacon(for: registration.generator.eid(beaconTime: nowTime - 5 * 1024), at: later)
        == nil)
    #expect(
      index.beacon(for: registration.generator.eid(beaconTime: nowTime + 5 * 1024), at: later)
        == nil)
    // Within its lookahead the index answers as a fresh one would.
    let minuteOn = later.addingTimeInterval(59)
    #expect(index.covers(minuteOn))
    #expect(index.beacon(for: registration.eid(at: minuteOn), at: minuteOn) == "b")
    #expect(!index.covers(later.addingTimeInterval(61)))
  }

  @Test func aOneSecondPeriodStillAllowsAMinuteOfDrift() throws {
    let registeredAt = Date(timeIntervalSince1970: 1_800_000_000)
    let registration = try EddystoneEIDRegistration(
      identityKey: hexBytes(vectors[2].key), rotationExponent: 0, clockValue: 1000,
      registeredAt: registeredAt)
    #expect(registration.tolerance == 60)
    let index = EddystoneEIDIndex(
      beacons: [(beacon: 7, registration: registration)], at: registeredAt)
    #expect(
      index.beacon(for: registration.generator.eid(beaconTime: 1000 - 60), at: registeredAt) == 7)
    #expect(
      index.beacon(for: registration.generator.eid(beaconTime: 1000 + 60), at: registeredAt) == 7)
    #expect(
      index.beacon(for: registration.generator.eid(beaconTime: 1000 - 61), at: registeredAt) == nil)
  }

  @Test func theWindowWidensWhileUnmatchedAndAMatchTeachesTheClock() throws {
    let registeredAt = Date(timeIntervalSince1970: 1_800_000_000)
    let registration = try EddystoneEIDRegistration(
      identityKey: hexBytes(vectors[0].key), rotationExponent: 10, clockValue: 65280,
      registeredAt: registeredAt)
    #expect(registration.window(at: registeredAt) == (1024, 1024))
    // A day unmatched: 100 ppm of drift (9 s) either way, and up to 32 periods behind.
    let dayOn = registeredAt.addingTimeInterval(86_400)
    let widened: (Int64, Int64) = (33_801, 1033)  // 1024 + 9 + 32 × 1024, 1024 + 9
    #expect(registration.window(at: dayOn) == widened)
    let tenMinutes: (Int64, Int64) = (1625, 1025)  // 1024 + 1 + 600, 1024 + 1
    #expect(registration.window(at: registeredAt.addingTimeInterval(600)) == tenMinutes)

    // The beacon lost power and restored a clock 20 000 s behind: found a day on, by the
    // widened window; the match moves the registered clock into the period heard.
    let index = EddystoneEIDIndex(beacons: [(beacon: "b", registration: registration)], at: dayOn)
    let lagging = registration.beaconTime(at: dayOn) - 20_000
    let heard = registration.generator.eid(beaconTime: UInt32(lagging))
    let match = try #require(index.match(for: heard, at: dayOn))
    #expect(match.beacon == "b")
    #expect(match.periodStart == lagging - lagging % 1024)
    let learned = match.registration.matched(periodStart: match.periodStart, at: dayOn)
    #expect(
      (match.periodStart..<(match.periodStart + 1024)).contains(learned.beaconTime(at: dayOn)))
    #expect(learned.lastMatchedAt == dayOn)
    #expect(learned.window(at: dayOn) == (1024, 1024), "matched: the window narrows again")
    // From then on it is found by the ids it broadcasts, without a widened window.
    let hourOn = dayOn.addingTimeInterval(3600)
    let relearned = EddystoneEIDIndex(beacons: [(beacon: "b", registration: learned)], at: hourOn)
    let now = registration.generator.eid(beaconTime: UInt32(lagging + 3600))
    #expect(relearned.beacon(for: now, at: hourOn) == "b")
    // A match within the period changes nothing but the time of the match.
    let again = learned.matched(
      periodStart: learned.beaconTime(at: dayOn) - learned.beaconTime(at: dayOn) % 1024,
      at: dayOn)
    #expect(again.clockOffset == learned.clockOffset)

    // Behind by more than 32 periods is not found; ahead only within the drift.
    let tooFar = registration.generator.eid(
      beaconTime: UInt32(registration.beaconTime(at: dayOn) - 40 * 1024))
    #expect(index.match(for: tooFar, at: dayOn) == nil)
    let ahead = registration.generator.eid(
      beaconTime: UInt32(registration.beaconTime(at: dayOn) + 3 * 1024))
    #expect(index.match(for: ahead, at: dayOn) == nil)
  }

  @Test func namespacedTypeFilters() {
    #expect(NamespacedTypeFilter.matches(namespace: "cafe", type: "menu", filter: "*"))
    #expect(NamespacedTypeFilter.matches(namespace: "cafe", type: "menu", filter: "cafe/*"))
    #expect(NamespacedTypeFilter.matches(namespace: "cafe", type: "menu", filter: "cafe/menu"))
    #expect(!NamespacedTypeFilter.matches(namespace: "cafe", type: "menu", filter: "caf/*"))
    #expect(!NamespacedTypeFilter.matches(namespace: "cafe", type: "menu", filter: "cafe/men"))
    // Parsed once: many filters, two look-ups an attachment.
    let set = NamespacedTypeFilter((0..<100).map { "ns\($0)/t" } + ["cafe/*"])
    #expect(set.matches(namespace: "cafe", type: "anything"))
    #expect(set.matches(namespace: "ns42", type: "t"))
    #expect(!set.matches(namespace: "ns42", type: "u"))
    #expect(!set.matches(namespace: "ns", type: "42/t"))
  }
}
