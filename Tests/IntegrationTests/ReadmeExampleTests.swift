import Core
import Resolution
import Strategy
import Testing

/// The README's 30-second example, kept compiling and working.
@Suite("README example")
struct ReadmeExampleTests {
  @Test("publish and subscribe as the README shows")
  func example() async throws {
    let manager = try await MessageManager(
      apiKey: "my-project",
      configuration: .init(resolver: .embedded, mediums: [ /* .bluez(), .pulseAudio() */]))

    let publication = try await manager.publish(Message(text: "Alice", type: "name")) { params in
      params.strategy = Strategy(mediums: .audio, mode: .scan)
    }
    let subscription = try await manager.subscribe(
      onFound: { message in print("found", message) },
      onLost: { message in print("lost", message) }
    ) { params in
      params.namespace = "com.example"
      params.type = "name"
    }
    #expect(publication.status == .active)
    #expect(subscription.status == .active)
    await subscription.cancel()
    var events: [SubscriptionEvent] = []
    for await event in subscription.events { events.append(event) }
    #expect(events.isEmpty)
    // The scoped form (the README reads its events; this closure returns at once).
    let scoped = try await manager.withSubscription(configure: { $0.type = "name" }) {
      subscription in subscription
    }
    #expect(scoped.status == .inactive)
    await manager.shutdown()
    #expect(publication.status == .inactive)
  }
}
