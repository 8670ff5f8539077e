@testable import AudioPulse
import Core
import Testing
import Tokens

/// The pace peer resolution asks for belongs to the token transmitted: it is kept when the
/// same token is sent again (a digest changed), dropped with a new token or a stop, and one
/// for a token not transmitted is ignored. No server is needed: the medium's shared state is
/// what the playback thread reads.
@Suite("PulseAudio medium: the pace held")
struct PaceTests {
  func medium() throws -> PulseAudioMedium {
    try PulseServer.medium(sink: "nearby", server: "unix:/nonexistent/nearby-test/native")
  }

  func held(_ medium: PulseAudioMedium) -> TransmitPace? { medium.withState { $0.pace?.pace } }

  @Test("kept for the same token, dropped with a new token or a stop, ignored for another")
  func paceFollowsTheToken() async throws {
    let medium = try medium()
    let token = Token(value: 0x0102)
    let answered = TransmitPace.answered(refreshWithin: .seconds(30))
    // Nothing transmitted: dropped.
    await medium.setPace(answered, for: token)
    #expect(held(medium) == nil)
    try await medium.transmit(token)
    await medium.setPace(answered, for: Token(value: 0x0999))
    #expect(held(medium) == nil)
    await medium.setPace(answered, for: token)
    #expect(held(medium) == answered)
    // The same token again (its digest changed): the pace stays.
    try await medium.transmit(token)
    #expect(held(medium) == answered)
    // Stopped, then the same token again: seeking until the resolver says otherwise.
    await medium.stopTransmitting()
    #expect(held(medium) == nil)
    try await medium.transmit(token)
    #expect(held(medium) == nil)
    await medium.setPace(answered, for: token)
    try await medium.transmit(Token(value: 0x0103))
    #expect(held(medium) == nil)
    await medium.shutdown()
  }
}
