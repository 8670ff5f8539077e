import Foundation
import Strategy
import Testing

@Suite("Strategy")
struct StrategyTests {
  @Test func defaults() throws {
    let strategy = Strategy()
    #expect(strategy.mediums == [.ble, .audio])
    #expect(strategy.mode == [.broadcast, .scan])
    #expect(!strategy.allowInBackground)
    #expect(strategy.distanceType == .default)
    #expect(strategy.ttl == .default)
    #expect(strategy.ttl.seconds == 300)
    #expect(Strategy.default == strategy)
    try strategy.validate()
  }

  @Test func bleOnly() throws {
    #expect(Strategy.bleOnly.mediums == .ble)
    #expect(Strategy.bleOnly.mode == .default)
    try Strategy.bleOnly.validate()
    var background = Strategy.bleOnly
    background.allowInBackground = true
    try background.validate()
  }

  @Test(arguments: [DiscoveryMediums.audio, .default])
  func backgroundRequiresBLEOnly(_ mediums: DiscoveryMediums) {
    let strategy = Strategy(mediums: mediums, allowInBackground: true)
    #expect(throws: StrategyError.backgroundRequiresBLEOnly(mediums: mediums)) {
      try strategy.validate()
    }
  }

  @Test func backgroundWithBLEOnlyScanOrBroadcastIsValid() throws {
    try Strategy(mediums: .ble, mode: .scan, allowInBackground: true).validate()
    try Strategy(mediums: .ble, mode: .broadcast, allowInBackground: true).validate()
  }

  @Test func earshotRequiresAudio() throws {
    let bleEarshot = Strategy(mediums: .ble, distanceType: .earshot)
    #expect(throws: StrategyError.earshotRequiresAudio(mediums: .ble)) {
      try bleEarshot.validate()
    }
    try Strategy(mediums: .audio, distanceType: .earshot).validate()
    try Strategy(mediums: .default, distanceType: .earshot).validate()
  }

  @Test func backgroundAndEarshotTogetherCannotBeValid() {
    // Background needs BLE only; earshot needs audio: no mediums satisfy both.
    for mediums in [DiscoveryMediums.ble, .audio, .default] {
      let strategy = Strategy(mediums: mediums, allowInBackground: true, distanceType: .earshot)
      #expect(throws: StrategyError.self) { try strategy.validate() }
    }
    let ble = Strategy(mediums: .ble, allowInBackground: true, distanceType: .earshot)
    #expect(throws: StrategyError.earshotRequiresAudio(mediums: .ble)) { try ble.validate() }
  }

  @Test func emptyMediumsOrModeAreRejected() {
    #expect(throws: StrategyError.noMediums) { try Strategy(mediums: []).validate() }
    #expect(throws: StrategyError.noDiscoveryMode) { try Strategy(mode: []).validate() }
    // Empty mediums is reported first, whatever else is wrong.
    let everythingWrong = Strategy(
      mediums: [], mode: [], allowInBackground: true, distanceType: .earshot)
    #expect(throws: StrategyError.noMediums) { try everythingWrong.validate() }
    let noMode = Strategy(mediums: .audio, mode: [], allowInBackground: true)
    #expect(throws: StrategyError.noDiscoveryMode) { try noMode.validate() }
  }

  @Test func effectiveMediums() {
    #expect(Strategy().effectiveMediums == .default)
    #expect(Strategy(mediums: .ble).effectiveMediums == .ble)
    #expect(Strategy(distanceType: .earshot).effectiveMediums == .audio)
    #expect(Strategy(mediums: .audio, distanceType: .earshot).effectiveMediums == .audio)
    #expect(Strategy(mediums: .ble, distanceType: .earshot).effectiveMediums.isEmpty)
  }

  @Test func broadcastsAndScans() {
    let both = Strategy()
    #expect(both.broadcasts(on: .ble))
    #expect(both.broadcasts(on: .audio))
    #expect(both.scans(on: .ble))
    #expect(both.scans(on: .audio))

    let broadcastOnly = Strategy(mode: .broadcast)
    #expect(broadcastOnly.broadcasts(on: .ble))
    #expect(!broadcastOnly.scans(on: .ble))
    #expect(!broadcastOnly.scans(on: .audio))

    let scanBLE = Strategy(mediums: .ble, mode: .scan)
    #expect(scanBLE.scans(on: .ble))
    #expect(!scanBLE.scans(on: .audio))
    #expect(!scanBLE.broadcasts(on: .ble))

    let earshot = Strategy(distanceType: .earshot)
    #expect(earshot.broadcasts(on: .audio))
    #expect(earshot.scans(on: .audio))
    #expect(!earshot.broadcasts(on: .ble))
    #expect(!earshot.scans(on: .ble))
  }

  static let samples: [Strategy] = [
    .default,
    .bleOnly,
    Strategy(mediums: .ble, mode: .scan, allowInBackground: true, ttl: .infinite),
    Strategy(mediums: .audio, mode: .broadcast, distanceType: .earshot, ttl: .default),
    Strategy(mediums: [], mode: [], ttl: .infinite),
  ]

  @Test(arguments: samples)
  func codableRoundTrip(_ strategy: Strategy) throws {
    #expect(try jsonRoundTrip(strategy) == strategy)
  }

  @Test func codableRoundTripOfFiniteTTL() throws {
    let strategy = Strategy(mediums: .audio, ttl: try TTL(seconds: 12.5))
    let decoded = try jsonRoundTrip(strategy)
    #expect(decoded == strategy)
    #expect(decoded.ttl.seconds == 12.5)
  }

  @Test func jsonShape() throws {
    let strategy = Strategy(mediums: .ble, mode: .scan, allowInBackground: true, ttl: .infinite)
    let data = try JSONEncoder().encode(strategy)
    let object = try #require(try JSONSerialization.jsonObject(with: data) as? [String: Any])
    #expect(object["mediums"] as? [String] == ["ble"])
    #expect(object["mode"] as? [String] == ["scan"])
    #expect(object["allowInBackground"] as? Bool == true)
    #expect(object["distanceType"] as? String == "default")
    #expect(object["ttl"] as? String == "infinite")
  }

  @Test func decodesHandWrittenJSON() throws {
    let json = """
      {"mediums": ["audio"], "mode": ["broadcast", "scan"], "allowInBackground": false,
       "distanceType": "earshot", "ttl": 60}
      """
    let strategy = try decode(Strategy.self, json: json)
    #expect(strategy.mediums == .audio)
    #expect(strategy.mode == .default)
    #expect(strategy.distanceType == .earshot)
    #expect(strategy.ttl == (try TTL(seconds: 60)))
    try strategy.validate()
  }

  @Test func decodingRejectsBadFields() {
    let badTTL = """
      {"mediums": ["ble"], "mode": ["scan"], "allowInBackground": false,
       "distanceType": "default", "ttl": 100000}
      """
    #expect(throws: DecodingError.self) { try decode(Strategy.self, json: badTTL) }
    let badMedium = """
      {"mediums": ["radio"], "mode": ["scan"], "allowInBackground": false,
       "distanceType": "default", "ttl": 10}
      """
    #expect(throws: DecodingError.self) { try decode(Strategy.self, json: badMedium) }
    let badDistance = """
      {"mediums": ["ble"], "mode": ["scan"], "allowInBackground": false,
       "distanceType": "near", "ttl": 10}
      """
    #expect(throws: DecodingError.self) { try decode(Strategy.self, json: badDistance) }
  }
}

@Suite("StrategyError")
struct StrategyErrorTests {
  @Test func ttlOutOfRangeNamesTheLimit() {
    let text = StrategyError.ttlOutOfRange(seconds: 86_400.5).description
    #expect(text.contains("86400"))
    #expect(text.contains("86400.5"))
    #expect(text.contains("infinite"))
    #expect(text.contains("more than 0"))
  }

  @Test func backgroundNamesTheRule() {
    let text = StrategyError.backgroundRequiresBLEOnly(mediums: .default).description
    #expect(text.contains("allowInBackground"))
    #expect(text.contains("BLE-only"))
    #expect(text.contains("ble,audio"))
  }

  @Test func earshotNamesTheRule() {
    let text = StrategyError.earshotRequiresAudio(mediums: .ble).description
    #expect(text.contains("earshot"))
    #expect(text.contains("audio"))
    #expect(text.contains("got mediums: ble"))
  }

  @Test func emptySetsNameTheRule() {
    let mediums = StrategyError.noMediums.description
    #expect(mediums.contains("at least one medium"))
    #expect(mediums.contains("ble") && mediums.contains("audio"))
    let mode = StrategyError.noDiscoveryMode.description
    #expect(mode.contains("at least one discovery mode"))
    #expect(mode.contains("broadcast") && mode.contains("scan"))
  }

  @Test func thrownErrorsDescribeThemselves() throws {
    let error = #expect(throws: StrategyError.self) {
      try Strategy(mediums: .audio, allowInBackground: true).validate()
    }
    #expect(try #require(error).description.contains("mediums: audio"))
  }

  @Test func unnamedMediumBitsAreRejected() {
    let unnamed = DiscoveryMediums(rawValue: 1 << 6)
    #expect(unnamed.unknown == unnamed)
    #expect(DiscoveryMediums.default.unknown.isEmpty)
    #expect("\(unnamed)" == "unknown(0x40)")
    #expect(throws: StrategyError.unknownMediums(unnamed)) {
      try Strategy(mediums: [.ble, unnamed]).validate()
    }
    #expect("\(StrategyError.unknownMediums(unnamed))".contains("ble, audio, lan"))
  }
}
