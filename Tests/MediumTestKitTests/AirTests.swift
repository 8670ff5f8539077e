import TestSupport
import Core
import Foundation
import MediumTestKit
import Testing
import Tokens
import NearbyTesting

/// A speaker and a hearer of one kind on an air, the hearer scanning and its sightings recorded.
struct Link {
  let air: Air
  let speaker: AirMedium
  let hearer: AirMedium
  let heard: Recorder<Sighting>

  /// Places "speaker" at the origin and "hearer" `distance` metres away.
  static func make(
    _ kind: Kind, distance: Double, air: Air = makeAir(), scanning: Bool = true
  ) async throws -> Link {
    await air.place("speaker", at: .origin)
    await air.place("hearer", at: Air.Position(x: distance))
    let speaker = await kind.medium(on: air, device: "speaker")
    let hearer = await kind.medium(on: air, device: "hearer")
    let link = Link(air: air, speaker: speaker, hearer: hearer, heard: Recorder(hearer.sightings))
    if scanning { try await hearer.startScanning() }
    return link
  }

  /// Waits at most `timeout` for a sighting of `token`.
  func sighting(of token: Token, timeout: Duration = defaultWaitBound) async -> Sighting? {
    await heard.first(timeout: timeout) { $0.token == token }
  }

  /// Whether `token` stays unheard for `rounds` advertising rounds, made by hand (on its
  /// manual clock the air makes none of its own). The hearer is the link's one scanner, so once
  /// its recorder holds every sighting the air delivered, a sighting of `token` would be seen.
  func staysSilent(about token: Token, rounds: Int = 15) async -> Bool {
    await air.rounds(rounds)
    await received(air, by: heard)
    return !heard.elements.contains { $0.token == token }
  }

  func shutdown() async {
    await speaker.shutdown()
    await hearer.shutdown()
  }
}

@Suite("Air")
struct AirTests {
  @Test func configurationDefaults() {
    let configuration = Air.Configuration()
    #expect(configuration.advertiseInterval == .milliseconds(100))
    #expect(configuration.latency == .zero)
    #expect(configuration.loss == 0)
    #expect(configuration.bleRange == 10)
    #expect(configuration.audioRange == 5)
    #expect(configuration.clock is ContinuousClock)
  }

  @Test func positions() async {
    let air = makeAir()
    #expect(await air.position(of: "nowhere") == .origin)
    await air.place("a", at: Air.Position(x: 3, y: 4))
    #expect(await air.position(of: "a") == Air.Position(x: 3, y: 4))
    #expect(Air.Position(x: 3, y: 4).distance(to: .origin) == 5)
    #expect(Air.Position(x: -1, y: 2).description == "(-1.0, 2.0)")
  }

  @Test(arguments: Kind.allCases)
  func hearsWithinRange(_ kind: Kind) async throws {
    let range = kind.range(in: Air.Configuration())
    let link = try await Link.make(kind, distance: range)
    #expect(await kind.canHear("hearer", "speaker", on: link.air))
    let token = Token.random()
    try await link.speaker.transmit(token)
    let sighting = try #require(await link.sighting(of: token))
    #expect(kind.matches(sighting))
    await link.shutdown()
  }

  @Test(arguments: Kind.allCases)
  func outOfRangeIsNotHeard(_ kind: Kind) async throws {
    let range = kind.range(in: Air.Configuration())
    let link = try await Link.make(kind, distance: range + 0.5)
    #expect(await !kind.canHear("hearer", "speaker", on: link.air))
    #expect(await !kind.canHear("speaker", "hearer", on: link.air))
    let token = Token.random()
    try await link.speaker.transmit(token)
    #expect(await link.staysSilent(about: token))
    #expect(await link.air.delivered == 0)
    // Moving into range is heard at once.
    await link.air.place("hearer", at: Air.Position(x: range - 0.5))
    #expect(await link.sighting(of: token) != nil)
    await link.shutdown()
  }

  @Test func rangesDifferByMedium() async throws {
    let air = makeAir()
    let ble = try await Link.make(.ble, distance: 7, air: air)
    #expect(await air.canHear("hearer", "speaker", on: .ble))
    #expect(await !air.canHear("hearer", "speaker", on: .audio))
    // The audio pair shares the devices, so it is 7 m apart too.
    let audioSpeaker = await air.makeMedium(device: "speaker", kind: .audio)
    let audioHearer = await air.makeMedium(device: "hearer", kind: .audio)
    let audioHeard = Recorder(audioHearer.sightings)
    try await audioHearer.startScanning()
    let bleToken = Token.random()
    let audioToken = Token.random()
    try await ble.speaker.transmit(bleToken)
    try await audioSpeaker.transmit(audioToken)
    #expect(await ble.sighting(of: bleToken) != nil)
    await air.rounds(15)
    await received(air, by: ble.heard, audioHeard)
    #expect(audioHeard.elements.isEmpty)
    #expect(!ble.heard.elements.contains { $0.token == audioToken })
    await ble.shutdown()
    await audioSpeaker.shutdown()
    await audioHearer.shutdown()
  }

  @Test func mediumsOfAnotherKindAreNotHeard() async throws {
    let air = makeAir()
    let speaker = await air.makeMedium(device: "a", kind: .ble)
    let hearer = await air.makeMedium(device: "b", kind: .audio)
    let heard = Recorder(hearer.sightings)
    try await hearer.startScanning()
    try await speaker.transmit(Token.random())
    await air.rounds(15)
    // Nothing delivered at all, so nothing can be on its way to the recorder.
    #expect(await air.delivered == 0)
    #expect(heard.elements.isEmpty)
    await speaker.shutdown()
    await hearer.shutdown()
  }

  @Test(arguments: Kind.allCases)
  func aDeviceNeverHearsItself(_ kind: Kind) async throws {
    let air = makeAir()
    let transmitter = await kind.medium(on: air, device: "solo")
    let sameDevice = await kind.medium(on: air, device: "solo")
    let ownHeard = Recorder(transmitter.sightings)
    let siblingHeard = Recorder(sameDevice.sightings)
    try await transmitter.startScanning()
    try await sameDevice.startScanning()
    try await transmitter.transmit(Token.random())
    #expect(await !kind.canHear("solo", "solo", on: air))
    await air.rounds(15)
    await received(air, by: ownHeard, siblingHeard)
    #expect(await air.delivered == 0)
    #expect(ownHeard.elements.isEmpty)
    #expect(siblingHeard.elements.isEmpty)
    await transmitter.shutdown()
    await sameDevice.shutdown()
  }

  @Test(arguments: Kind.allCases)
  func blockAndUnblock(_ kind: Kind) async throws {
    let link = try await Link.make(kind, distance: 1)
    // Either order names the same pair.
    await link.air.block("hearer", "speaker")
    #expect(await !kind.canHear("hearer", "speaker", on: link.air))
    #expect(await !kind.canHear("speaker", "hearer", on: link.air))
    let token = Token.random()
    try await link.speaker.transmit(token)
    #expect(await link.staysSilent(about: token))
    await link.air.unblock("speaker", "hearer")
    #expect(await kind.canHear("hearer", "speaker", on: link.air))
    #expect(await link.sighting(of: token) != nil)
    // Blocking again silences the pair once in-flight sightings have arrived.
    await link.air.block("speaker", "hearer")
    await received(link.air, by: link.heard)
    let count = link.heard.elements.count
    await link.air.rounds(10)
    await received(link.air, by: link.heard)
    #expect(link.heard.elements.count == count)
    await link.shutdown()
  }

  @Test func blockingOnePairLeavesOthers() async throws {
    let air = makeAir()
    await air.place("c", at: Air.Position(x: 2))
    await air.block("a", "b")
    #expect(await !air.canHear("a", "b", on: .ble))
    #expect(await air.canHear("a", "c", on: .ble))
    #expect(await air.canHear("c", "b", on: .audio))
  }

  @Test(arguments: Kind.allCases)
  func totalLossDeliversNothing(_ kind: Kind) async throws {
    let air = makeAir { $0.loss = 1 }
    let link = try await Link.make(kind, distance: 1, air: air)
    let token = Token.random()
    try await link.speaker.transmit(token)
    #expect(await link.staysSilent(about: token))
    #expect(await air.delivered == 0)
    #expect(await air.dropped > 0)
    // Back to no loss: heard in the next round.
    await air.setLoss(0)
    await air.rounds(1)
    #expect(await link.sighting(of: token) != nil)
    #expect(await air.delivered > 0)
    await link.shutdown()
  }

  @Test func noLossDeliversEveryAdvert() async throws {
    let clock = ManualClock()
    let air = makeAir(clock: clock) { $0.loss = 0 }
    let link = try await Link.make(.ble, distance: 1, air: air)
    let token = Token.random()
    try await link.speaker.transmit(token)
    // The round on transmit, and four more on the clock.
    await clock.elapse(.milliseconds(20) * 4)
    let sightings = await link.heard.waitForCount(5)
    #expect(sightings.count >= 5)
    #expect(sightings.allSatisfy { $0.token == token })
    #expect(await air.dropped == 0)
    #expect(await air.delivered >= 5)
    await link.shutdown()
  }

  @Test func setLossClampsToOne() async throws {
    let link = try await Link.make(.audio, distance: 1)
    let token = Token.random()
    try await link.speaker.transmit(token)
    #expect(await link.sighting(of: token) != nil)
    await link.air.setLoss(7)
    let delivered = await link.air.delivered
    let dropped = await link.air.dropped
    await link.air.rounds(10)
    #expect(await link.air.delivered == delivered)
    #expect(await link.air.dropped > dropped)
    await link.air.setLoss(-3)  // clamps to 0
    let droppedAtZero = await link.air.dropped
    await link.air.rounds(10)
    #expect(await link.air.dropped == droppedAtZero)
    #expect(await link.air.delivered > delivered)
    await link.shutdown()
  }

  @Test func partialLossIsRepeatableWithASeed() async throws {
    func run() async throws -> [Bool] {
      let air = makeAir(interval: .seconds(60)) {
        $0.loss = 0.5
        $0.seed = 1234
      }
      let link = try await Link.make(.ble, distance: 1, air: air)
      try await link.speaker.transmit(Token.random())
      var outcomes: [Bool] = []
      for _ in 0..<64 {
        let before = await air.delivered
        await air.pulse()
        outcomes.append(await air.delivered > before)
      }
      await link.shutdown()
      return outcomes
    }
    let first = try await run()
    let second = try await run()
    #expect(first == second)
    #expect(first.contains(true) && first.contains(false))
  }

  @Test(arguments: Kind.allCases)
  func setStatusReachesTheMedium(_ kind: Kind) async throws {
    let air = makeAir()
    let medium = await kind.medium(on: air, device: "a")
    let otherKind = await (kind == .ble ? Kind.audio : .ble).medium(on: air, device: "a")
    let otherDevice = await kind.medium(on: air, device: "b")
    let statuses = Recorder(medium.statusUpdates)
    let otherKindStatuses = Recorder(otherKind.statusUpdates)
    let otherDeviceStatuses = Recorder(otherDevice.statusUpdates)
    #expect(await statuses.first() == .ready)

    await kind.setStatus(.poweredOff, on: air, device: "a")
    await kind.setStatus(.permissionDenied("grant access"), on: air, device: "a")
    await kind.setStatus(.ready, on: air, device: "a")
    let expected: [MediumStatus] = [
      .ready, .poweredOff, .permissionDenied("grant access"), .ready,
    ]
    #expect(await statuses.waitForCount(expected.count) == expected)

    await kind.setStatus(.unavailable("no sink"), on: air, device: "a")
    #expect(await statuses.first { $0 == .unavailable("no sink") } != nil)
    // A status of their own, reported after all the above, reaches the others: once it has,
    // one of the above would have arrived before it.
    await (kind == .ble ? Kind.audio : .ble).setStatus(.poweredOff, on: air, device: "a")
    await kind.setStatus(.poweredOff, on: air, device: "b")
    #expect(await otherKindStatuses.waitForCount(2) == [.ready, .poweredOff])
    #expect(await otherDeviceStatuses.waitForCount(2) == [.ready, .poweredOff])

    await medium.shutdown()
    #expect(await statuses.waitUntilFinished())
    await otherKind.shutdown()
    await otherDevice.shutdown()
  }

  @Test(arguments: Kind.allCases)
  func latencyDelaysSightings(_ kind: Kind) async throws {
    let latency = Duration.milliseconds(300)
    // A long interval: only the pulse on transmit is heard during the test. On real time, so
    // that the sighting's stamp can be compared with the wall clock.
    let air = makeAir(interval: .seconds(60), clock: ContinuousClock()) { $0.latency = latency }
    let link = try await Link.make(kind, distance: 1, air: air)
    let token = Token.random()
    let start = ContinuousClock.now
    try await link.speaker.transmit(token)
    let sighting = try #require(await link.sighting(of: token))
    let elapsed = ContinuousClock.now - start
    #expect(elapsed >= latency, "heard after \(elapsed)")
    // The sighting is stamped when it was sent, before the latency.
    #expect(Date().timeIntervalSince(sighting.time) >= 0.25)
    await link.shutdown()
  }

  @Test(arguments: Kind.allCases)
  func latencyWaitsOnTheClock(_ kind: Kind) async throws {
    let clock = ManualClock()
    let air = makeAir(interval: .seconds(60), clock: clock) { $0.latency = .milliseconds(300) }
    let link = try await Link.make(kind, distance: 1, air: air)
    let token = Token.random()
    try await link.speaker.transmit(token)
    #expect(await air.delivered == 1)
    // The sighting waits on the clock (the rounds and the courier wait on it), so it cannot
    // have been heard; just short of the latency nobody wakes.
    #expect(await clock.untilSleepers { $0 == 2 })
    #expect(link.heard.elements.isEmpty)
    clock.advance(by: .milliseconds(299))
    #expect(clock.sleeperCount == 2)
    #expect(link.heard.elements.isEmpty)
    // At the latency it arrives.
    clock.advance(by: .milliseconds(1))
    let sighting = try #require(await link.sighting(of: token))
    #expect(kind.matches(sighting))
    #expect(link.heard.elements.count == 1)
    await link.shutdown()
  }

  @Test func roundsRunOnTheClock() async throws {
    let clock = ManualClock()
    let air = makeAir(interval: .milliseconds(100), clock: clock)
    let link = try await Link.make(.ble, distance: 1, air: air)
    try await link.speaker.transmit(Token.random())
    #expect(await air.delivered == 1)  // the round on transmit
    // Short of an interval: no round. Then one round at the interval, once the rounds have
    // gone back to waiting (so the count cannot grow behind the check).
    clock.advance(by: .milliseconds(99))
    await clock.elapse(.milliseconds(1))
    #expect(await air.delivered == 2)
    // A clock that jumps three intervals gets three rounds.
    await clock.elapse(.milliseconds(300))
    #expect(await air.delivered == 5)
    await received(air, by: link.heard)
    #expect(link.heard.elements.count == 5)
    await link.shutdown()
  }

  @Test func theLastMediumToGoEndsTheAirsTasks() async throws {
    let clock = ManualClock()
    let air = makeAir(clock: clock) { $0.latency = .seconds(1) }
    let link = try await Link.make(.audio, distance: 1, air: air)
    try await link.speaker.transmit(Token.random())
    #expect(await clock.untilSleepers { $0 == 2 })  // the rounds and a sighting in flight
    await link.speaker.shutdown()
    #expect(clock.sleeperCount == 2)  // a medium is left
    // Awaited: both tasks have ended when the shutdown returns.
    await link.hearer.shutdown()
    #expect(clock.sleeperCount == 0)
    #expect(link.heard.elements.isEmpty)
    #expect(await link.heard.waitUntilFinished())
    // A new medium starts the rounds again; shutting the air down ends them and finishes it.
    let medium = await air.makeMedium(device: "late", kind: .ble)
    let statuses = Recorder(medium.statusUpdates)
    #expect(await clock.untilSleepers { $0 == 1 })
    await air.shutdown()
    #expect(clock.sleeperCount == 0)
    #expect(await statuses.waitUntilFinished())
  }

  @Test func withoutLatencySightingsArriveOnTransmit() async throws {
    let air = makeAir(interval: .seconds(60))
    let link = try await Link.make(.ble, distance: 1, air: air)
    let token = Token.random()
    try await link.speaker.transmit(token)
    // The pulse on transmit delivers at once; with a 60 s interval nothing else could.
    #expect(await link.sighting(of: token) != nil)
    #expect(await air.delivered == 1)
    await link.shutdown()
  }

  @Test(arguments: [1.0, 2, 5, 10])
  func bleSightingsCarryRSSIAndTxPower(_ distance: Double) async throws {
    let link = try await Link.make(.ble, distance: distance)
    let token = Token.random()
    try await link.speaker.transmit(token)
    let sighting = try #require(await link.sighting(of: token))
    #expect(sighting.medium == .ble)
    #expect(sighting.token == token)
    #expect(sighting.txPower == Air.txPowerAt0m)
    #expect(sighting.txPower == -18)
    let rssi = try #require(sighting.rssi)
    #expect(abs(rssi - (Air.rssiAt1m - 20 * log10(distance))) < 1e-9)
    #expect(sighting.snr == nil)
    await link.shutdown()
  }

  @Test func bleRSSIKnownValues() async throws {
    for (distance, expected) in [(1.0, -59.0), (10, -79), (0, -39)] {
      let link = try await Link.make(.ble, distance: distance)
      let token = Token.random()
      try await link.speaker.transmit(token)
      let rssi = try #require(await link.sighting(of: token)?.rssi)
      #expect(abs(rssi - expected) < 1e-9, "at \(distance) m")
      await link.shutdown()
    }
  }

  @Test(arguments: [1.0, 2.5, 5])
  func audioSightingsCarrySNR(_ distance: Double) async throws {
    let link = try await Link.make(.audio, distance: distance)
    let token = Token.random()
    try await link.speaker.transmit(token)
    let sighting = try #require(await link.sighting(of: token))
    #expect(sighting.medium == .audio)
    let snr = try #require(sighting.snr)
    #expect(abs(snr - (30 - 20 * log10(distance))) < 1e-9)
    #expect(sighting.rssi == nil)
    #expect(sighting.txPower == nil)
    await link.shutdown()
  }

  @Test func mediumDescribesItself() async {
    let air = makeAir()
    let medium = await air.makeMedium(device: "kitchen", kind: .audio)
    #expect(medium.device == "kitchen")
    #expect(medium.kind == .audio)
    #expect(medium.name == "air audio kitchen")
    #expect(medium.capabilities == [.broadcast, .scan])
    await medium.shutdown()
  }

  @Test func providers() {
    let air = makeAir()
    let providers = MediumProvider.air(air, device: "d")
    #expect(providers.map(\.name) == ["air ble d", "air audio d"])
    #expect(MediumProvider.air(air, device: "d", mediums: .audio).map(\.name) == ["air audio d"])
    #expect(MediumProvider.air(air, device: "e", medium: .ble).name == "air ble e")
  }

  @Test func shutdownFinishesStreamsAndIsIdempotent() async throws {
    let link = try await Link.make(.ble, distance: 1)
    let statuses = Recorder(link.hearer.statusUpdates)
    await link.hearer.shutdown()
    await link.hearer.shutdown()
    #expect(await link.heard.waitUntilFinished())
    #expect(await statuses.waitUntilFinished())
    // A detached medium's calls do nothing.
    try await link.hearer.startScanning()
    try await link.hearer.transmit(Token.random())
    await link.hearer.stopScanning()
    await link.hearer.stopTransmitting()
    await link.speaker.shutdown()
  }
}
