import Core
import MediumTestKit
import Testing
import Tokens

/// Everything `medium` reported, read after shutting it down (which finishes the stream).
func allSightings(of medium: ScriptedMedium) async -> [Sighting] {
  await medium.shutdown()
  var sightings: [Sighting] = []
  for await sighting in medium.sightings { sightings.append(sighting) }
  return sightings
}

@Suite("ScriptedMedium")
struct ScriptedMediumTests {
  @Test func defaults() async {
    let medium = ScriptedMedium(kind: .ble)
    #expect(medium.kind == .ble)
    #expect(medium.name == "scripted ble")
    #expect(medium.capabilities == [.broadcast, .scan])
    #expect(medium.transmittedToken == nil)
    #expect(!medium.isScanning)
    #expect(ScriptedMedium(kind: .audio, name: "mic").name == "mic")
    #expect(MediumProvider.scripted(medium).name == "scripted ble")
    await medium.shutdown()
  }

  @Test func hearsOnlyWhileScanning() async throws {
    let medium = ScriptedMedium(kind: .audio)
    let before = Token(value: 1)
    let during = Token(value: 2)
    let after = Token(value: 3)
    #expect(!medium.hear(before))
    try await medium.startScanning()
    #expect(medium.isScanning)
    #expect(medium.hear(during, rssi: -70, txPower: -12))
    await medium.stopScanning()
    #expect(!medium.isScanning)
    #expect(!medium.hear(after))

    let sightings = await allSightings(of: medium)
    #expect(sightings.map(\.token) == [during])
    let sighting = try #require(sightings.first)
    #expect(sighting.medium == .audio)
    #expect(sighting.rssi == -70)
    #expect(sighting.txPower == -12)
  }

  @Test func neverHearsItsOwnToken() async throws {
    let medium = ScriptedMedium(kind: .ble)
    let own = Token.random()
    let other = Token(value: own.value ^ 1)
    try await medium.startScanning()
    try await medium.transmit(own)
    #expect(medium.transmittedToken == own)
    #expect(!medium.hear(own))
    #expect(medium.hear(other))
    #expect(!medium.hear(own, rssi: nil))

    // After rotation the old token is someone else's, the new one ours.
    let rotated = Token(value: own.value ^ 2)
    try await medium.transmit(rotated)
    #expect(medium.transmittedToken == rotated)
    #expect(!medium.hear(rotated))
    #expect(medium.hear(own))

    await medium.stopTransmitting()
    #expect(medium.transmittedToken == nil)
    #expect(medium.hear(rotated))

    let heard = await allSightings(of: medium).map(\.token)
    #expect(heard == [other, own, rotated])
  }

  @Test func manyTokensAreHeardInOrder() async throws {
    let medium = ScriptedMedium(kind: .ble)
    try await medium.startScanning()
    let own = Token(value: 500)
    try await medium.transmit(own)
    let tokens = (0..<1_000).map { Token(value: UInt64($0)) }
    let reported = tokens.filter { medium.hear($0) }
    #expect(reported.count == 999)
    #expect(!reported.contains(own))
    #expect(await allSightings(of: medium).map(\.token) == reported)
  }

  @Test func statusesAreReported() async {
    let medium = ScriptedMedium(kind: .ble)
    medium.setStatus(.poweredOff)
    medium.setStatus(.permissionDenied("enable bluetooth"))
    await medium.shutdown()
    var statuses: [MediumStatus] = []
    for await status in medium.statusUpdates { statuses.append(status) }
    #expect(statuses == [.ready, .poweredOff, .permissionDenied("enable bluetooth")])
  }

  @Test func shutdownResetsAndStopsHearing() async throws {
    let medium = ScriptedMedium(kind: .ble)
    try await medium.startScanning()
    try await medium.transmit(Token.random())
    await medium.shutdown()
    #expect(!medium.isScanning)
    #expect(medium.transmittedToken == nil)
    #expect(!medium.hear(Token.random()))
    var count = 0
    for await _ in medium.sightings { count += 1 }
    #expect(count == 0)
  }
}
