@_spi(Resolver) import Core
import Foundation
@_spi(Resolver) import PeerResolution
import Testing
import Tokens

/// A token bound to a local device after that resolver started asking about it (nearby-server's
/// bridge binds a server device's token when the device reports): the question is dropped, so
/// the resolver never answers itself about its own device.
@Suite struct PeerAliasTests {
  @Test func bindingAnAliasEndsTheQuestionAboutIt() async throws {
    let fixture = PeerFixture()
    let hearer = try await fixture.node(name: "hearer")
    let token = Token.random()
    try await hearer.report(Report(sightings: [Sighting(token: token, medium: .audio)]))
    #expect(await hearer.resolver.waitingQuestions == 1)
    let owner = try await hearer.resolver.register(apiKey: "project-key")
    try await hearer.resolver.bindAlias(
      token, to: owner, until: fixture.time.now.addingTimeInterval(60))
    #expect(await hearer.resolver.waitingQuestions == 0)
    // And nothing is asked again about it: it is a local device's now.
    await fixture.advance(2, hearer)
    #expect(await hearer.resolver.waitingQuestions == 0)
    await fixture.shutdown(hearer)
  }
}
