@_spi(Resolver) import Core
import Foundation
import MediumTestKit
import Resolution
import Strategy
import Testing
import Tokens

@Suite("In-process resolver")
struct InProcessResolverTests {
  @Test("events for other devices arrive on their stream, and lost fires by itself")
  func streamAndSweeper() async throws {
    let resolver = try InProcessResolver(configuration: .init(lostAfter: .milliseconds(200)))
    let a = try await resolver.register(apiKey: "k")
    let b = try await resolver.register(apiKey: "k")
    let events = try await resolver.events(for: b)
    let subscription = SubscriptionID.random()
    _ = try await resolver.report(Report(subscribe: [SubscriptionSpec(id: subscription)]), from: b)
    let answer = try await resolver.report(
      Report(publish: [
        PublicationSpec(id: .random(), message: Message(text: "hi"), strategy: .default)
      ]),
      from: a)
    // The publisher hears the subscriber: the event goes to the subscriber's stream.
    let bToken = try await resolver.report(Report(), from: b).directives.token
    _ = try await resolver.report(
      Report(sightings: [Sighting(token: bToken, medium: .ble)]), from: a)
    #expect(answer.events.isEmpty)
    var iterator = events.makeAsyncIterator()
    #expect(
      await iterator.next()
        == SequencedEvent(sequence: 1, event: .found(subscription, Message(text: "hi"))))
    #expect(
      await iterator.next()
        == SequencedEvent(sequence: 2, event: .lost(subscription, Message(text: "hi"))))
    #expect(await resolver.counts().deliveries == 0)
  }

  @Test("an empty API key is refused; unregister finishes the stream")
  func keysAndUnregister() async throws {
    let resolver = try InProcessResolver()
    await #expect(throws: ResolverError.invalidAPIKey) { try await resolver.register(apiKey: "") }
    let a = try await resolver.register(apiKey: "k")
    let events = try await resolver.events(for: a)
    try await resolver.unregister(a)
    var iterator = events.makeAsyncIterator()
    #expect(await iterator.next() == nil)
    #expect(await resolver.counts().devices == 0)
  }
}
