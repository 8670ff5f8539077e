@_spi(Resolver) import Core
import MediumTestKit
@_spi(Resolver) import PeerResolution
import Strategy
import Testing
import NearbyTesting
import Tokens

/// The owner's pace through its resolver, on a hand-moved time: a hearer's question about
/// the current token makes it answered, and silence makes it seek again, across a rotation
/// after which the hearer still asks about the token before.
@Suite("Peer resolver: the transmit pace")
struct PeerPacingTests {
  @Test("a late question about the token before a rotation leaves the current one's pace alone")
  func lateQuestionAboutTheOldToken() async throws {
    let f = PeerFixture()
    let phone = try await f.node(name: "phone")
    let box = try await f.node(name: "box", tokenLifetime: .seconds(7))
    let paces = StreamRecorder(try await box.resolver.transmitPaces(for: box.device))
    try await phone.publish("Play", type: "cast", strategy: Strategy(mediums: .audio, mode: .scan))
    try await box.subscribe(
      type: "cast", strategy: Strategy(mediums: .audio, mode: .broadcast, ttl: .infinite))
    let first = try await box.token()
    try await phone.hear(box, on: .audio, withReturnPath: false)
    #expect(await box.settled { $0.found == ["Play"] })
    let answered = TransmitPace.answered(refreshWithin: .seconds(10))
    #expect(paces.elements == [TransmitPaceChange(token: first, mediums: .audio, pace: answered)])
    // The box's token rotates; the phone hears the new one and asks about it.
    await f.advance(8, phone, box)
    let second = try await box.token()
    #expect(second != first)
    try await phone.hear(box, on: .audio, withReturnPath: false)
    #expect(await phone.answered())
    #expect(
      paces.elements.last == TransmitPaceChange(token: second, mediums: .audio, pace: answered))
    // A sighting of the token before, refreshed by the phone: a question about it.
    try await phone.report(
      Report(sightings: [Sighting(token: first, medium: .audio, time: phone.now)]))
    #expect(await phone.answered())
    for _ in 0..<4 {
      await f.advance(1, phone, box)
      #expect(await phone.answered())
    }
    let changes = paces.elements.count
    // Nobody hears the box any more: within lostAfter the phone stops asking, and twice
    // lostAfter after its last question the box's current token seeks again.
    for _ in 0..<40 { await f.advance(1, phone, box) }
    let after = Array(paces.elements.dropFirst(changes))
    #expect(after == [TransmitPaceChange(token: second, mediums: .audio, pace: .seeking)])
    #expect(!paces.elements.contains { $0.token == first && $0.pace == .seeking })
    await f.shutdown(phone, box)
  }
}
