import TestSupport
@_spi(Resolver) import Core
import MediumTestKit
import Resolution
import Strategy
import Testing
import Tokens
import NearbyTesting

@Suite("Event order, stale answers and recovery")
struct OrderingTests {
  static func manager(_ resolver: StubResolver, medium: ScriptedMedium = ScriptedMedium(kind: .ble))
    async throws -> MessageManager
  {
    try await MessageManager(
      apiKey: "k",
      configuration: .init(resolver: .custom(resolver), mediums: [.scripted(medium)]))
  }

  @Test("a lost that overtakes its found on the stream waits for it")
  func lostWaitsForFound() async throws {
    let resolver = StubResolver()
    let manager = try await Self.manager(resolver)
    let seen = Calls<String>()
    let subscription = try await manager.subscribe(
      onFound: { seen.append("found \($0.text ?? "")") },
      onLost: { seen.append("lost \($0.text ?? "")") })
    let message = Message(text: "m")
    // Sequence 2 (lost) arrives on the stream before sequence 1 (found) in an answer. The
    // manager waits on the stream for its first event, and has handled this one once it asks
    // for the next.
    #expect(await eventually { await resolver.eventRequests == 1 })
    await resolver.push(SequencedEvent(sequence: 2, event: .lost(subscription.id, message)))
    #expect(await eventually { await resolver.eventRequests == 2 })
    #expect(seen.all.isEmpty)
    await resolver.queueInNextAnswer([
      SequencedEvent(sequence: 1, event: .found(subscription.id, message))
    ])
    _ = try await manager.publish(Message(text: "x"))  // any report fetches the answer
    #expect(await seen.until { $0 == ["found m", "lost m"] })
    // A duplicate is ignored: the next event, pushed after it, comes right after the lost.
    await resolver.push(SequencedEvent(sequence: 1, event: .found(subscription.id, message)))
    await resolver.push(
      SequencedEvent(sequence: 3, event: .found(subscription.id, Message(text: "n"))))
    #expect(await seen.until { $0.count >= 3 })
    #expect(seen.all == ["found m", "lost m", "found n"])
    await manager.shutdown()
  }

  @Test("a closed event stream means the resolver forgot the device: handles stop")
  func streamClosed() async throws {
    let resolver = StubResolver()
    let manager = try await Self.manager(resolver)
    let subscription = try await manager.subscribe()
    await resolver.closeStream()
    #expect(await eventually { subscription.status == .inactive })
    await #expect(throws: ManagerError.shutDown) { try await manager.publish(Message(text: "x")) }
  }

  @Test("a medium that recovers is told again to transmit and scan")
  func recovery() async throws {
    let resolver = StubResolver()
    let medium = ScriptedMedium(kind: .ble)
    let manager = try await Self.manager(resolver, medium: medium)
    let publication = try await manager.publish(Message(text: "x"))
    #expect(medium.transmitCalls == 1 && medium.startScanningCalls == 1)
    medium.setStatus(.poweredOff)
    medium.setStatus(.ready)
    #expect(await eventually { medium.transmitCalls == 2 && medium.startScanningCalls == 2 })
    await publication.cancel()
    await manager.shutdown()
  }

  @Test("an expired broadcast-only publication stops the medium transmitting")
  func expiryStopsTransmitting() async throws {
    let resolver = try InProcessResolver()
    let medium = ScriptedMedium(kind: .ble)
    let manager = try await MessageManager(
      apiKey: "k",
      configuration: .init(resolver: .inProcess(resolver), mediums: [.scripted(medium)]))
    let publication = try await manager.publish(Message(text: "x")) {
      $0.strategy = Strategy(mediums: .ble, mode: .broadcast, ttl: try TTL(seconds: 0.2))
    }
    #expect(medium.transmittedToken != nil)
    #expect(await eventually { publication.status == .inactive })
    #expect(await medium.until { medium.transmittedToken == nil })
    await manager.shutdown()
  }
}
