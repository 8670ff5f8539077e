import TestSupport
import Core
import MediumTestKit
import Resolution
import Strategy
import Testing
import NearbyTesting

/// The structured forms of Core's API: scoped publications, subscriptions and managers, events
/// that keep their subscription alive, status streams with a reader each, the trailing
/// closure of `subscribe`, and an injected clock.
@Suite("Structured lifetimes")
struct ScopedLifetimeTests {
  struct Failure: Error, Equatable {}

  @Test("withPublication unpublishes when its closure returns")
  func publicationReturns() async throws {
    let resolver = try InProcessResolver()
    let device = try await ScriptedDevice(resolver: resolver)
    let publication = try await device.manager.withPublication(Message(text: "x")) {
      publication in
      #expect(publication.status == .active)
      #expect(await device.manager.publicationCount == 1)
      #expect(await resolver.counts().publications == 1)
      return publication
    }
    #expect(publication.status == .inactive)
    #expect(await device.manager.publicationCount == 0)
    #expect(await resolver.counts().publications == 0)
    await device.manager.shutdown()
  }

  @Test("withPublication unpublishes when its closure throws, and rethrows")
  func publicationThrows() async throws {
    let resolver = try InProcessResolver()
    let device = try await ScriptedDevice(resolver: resolver)
    let held = Calls<Publication>()
    await #expect(throws: Failure()) {
      try await device.manager.withPublication(
        Message(text: "x"), configure: { $0.strategy = Strategy(mediums: .ble) }
      ) { publication in
        held.append(publication)
        throw Failure()
      }
    }
    #expect(held.all.map(\.status) == [.inactive])
    #expect(await device.manager.publicationCount == 0)
    #expect(await resolver.counts().publications == 0)
    await device.manager.shutdown()
  }

  @Test("withSubscription unsubscribes when its closure returns, and its events finish")
  func subscriptionReturns() async throws {
    let resolver = try InProcessResolver()
    let device = try await ScriptedDevice(resolver: resolver)
    let events = try await device.manager.withSubscription(configure: { $0.type = "name" }) {
      subscription in
      #expect(subscription.status == .active)
      #expect(await resolver.counts().subscriptions == 1)
      return subscription.events
    }
    #expect(events.subscription.status == .inactive)
    var iterator = events.makeAsyncIterator()
    #expect(await iterator.next() == nil)
    #expect(await device.manager.subscriptionCount == 0)
    #expect(await resolver.counts().subscriptions == 0)
    await device.manager.shutdown()
  }

  @Test("withSubscription unsubscribes when its task is cancelled")
  func subscriptionCancelled() async throws {
    let resolver = try InProcessResolver()
    let device = try await ScriptedDevice(resolver: resolver)
    let manager = device.manager
    let task = Task {
      try await manager.withSubscription { subscription in
        for await _ in subscription.events {}
        try Task.checkCancellation()
      }
    }
    #expect(await eventually { await resolver.counts().subscriptions == 1 })
    task.cancel()
    await #expect(throws: CancellationError.self) { try await task.value }
    #expect(await manager.subscriptionCount == 0)
    #expect(await resolver.counts().subscriptions == 0)
    await manager.shutdown()
  }

  @Test("withManager shuts the manager down when its closure returns or throws")
  func scopedManager() async throws {
    let resolver = try InProcessResolver()
    let configuration = MessageManager.Configuration(resolver: .inProcess(resolver))
    let (manager, publication) = try await MessageManager.withManager(
      apiKey: "test", configuration: configuration
    ) { manager in
      let publication = try await manager.publish(Message(text: "x"))
      #expect(await resolver.counts().devices == 1)
      return (manager, publication)
    }
    #expect(publication.status == .inactive)
    await #expect(throws: ManagerError.shutDown) {
      try await manager.publish(Message(text: "x"))
    }
    #expect(await resolver.counts().devices == 0)
    await #expect(throws: Failure()) {
      try await MessageManager.withManager(apiKey: "test", configuration: configuration) { _ in
        throw Failure()
      }
    }
    #expect(await resolver.counts().devices == 0)
  }

  @Test("a subscription's events keep it alive; dropping them unsubscribes")
  func eventsKeepAlive() async throws {
    let resolver = try InProcessResolver()
    let alice = try await ScriptedDevice(resolver: resolver)
    let bob = try await ScriptedDevice(resolver: resolver)
    let publication = try await alice.manager.publish(Message(text: "Alice"))
    do {
      // Only the events are kept, not the handle.
      let events = try await bob.manager.subscribe().events
      // A dropped handle is released by a queue the manager works through in order: once a
      // publication dropped after it is released, a release of the subscription would have
      // been done too.
      let marker = try await bob.manager.publish(Message(text: "marker")).statusUpdates
      #expect(await StreamRecorder(marker).first(where: { $0 == .inactive }) != nil)
      #expect(await resolver.counts().subscriptions == 1)
      let token = try #require(await alice.manager.currentToken)
      #expect(bob.ble.hear(token))
      var iterator = events.makeAsyncIterator()
      #expect(await iterator.next() == .found(Message(text: "Alice")))
    }
    #expect(await eventually { await resolver.counts().subscriptions == 0 })
    await publication.cancel()
    await alice.manager.shutdown()
    await bob.manager.shutdown()
  }

  @Test("two readers of statusUpdates each get every status")
  func twoStatusReaders() async throws {
    let device = try await ScriptedDevice(resolver: InProcessResolver())
    let publication = try await device.manager.publish(Message(text: "x"))
    let (first, second) = (publication.statusUpdates, publication.statusUpdates)
    let early = StreamRecorder(first)
    await publication.cancel()
    let late = StreamRecorder(second)
    let third = StreamRecorder(publication.statusUpdates)
    for recorder in [early, late, third] {
      #expect(await recorder.waitUntilFinished())
      #expect(recorder.elements == [.starting, .active, .inactive])
    }
    let subscription = try await device.manager.subscribe()
    let readers = [
      StreamRecorder(subscription.statusUpdates), StreamRecorder(subscription.statusUpdates),
    ]
    await subscription.cancel()
    for recorder in readers {
      #expect(await recorder.waitUntilFinished())
      #expect(recorder.elements == [.starting, .active, .inactive])
    }
    await device.manager.shutdown()
  }

  @Test("the natural trailing closure of subscribe is onFound; after onFound it is configure")
  func trailingClosures() async throws {
    let resolver = try InProcessResolver()
    let alice = try await ScriptedDevice(resolver: resolver)
    let bob = try await ScriptedDevice(resolver: resolver)
    let found = Calls<Message>()
    let typed = Calls<Message>()
    let publication = try await alice.manager.publish(Message(text: "Alice", type: "name"))
    let other = try await alice.manager.publish(Message(text: "menu", type: "menu"))
    let all = try await bob.manager.subscribe { message in found.append(message) }
    let names = try await bob.manager.subscribe(onFound: { typed.append($0) }) { params in
      params.type = "name"
    }
    let token = try #require(await alice.manager.currentToken)
    #expect(bob.ble.hear(token))
    #expect(await found.until { $0.count == 2 })
    #expect(await typed.until { $0.count == 1 })
    #expect(Set(found.all.map(\.type)) == ["name", "menu"])
    #expect(typed.all == [Message(text: "Alice", type: "name")])
    for handle in [all, names] { await handle.cancel() }
    for handle in [publication, other] { await handle.cancel() }
    await alice.manager.shutdown()
    await bob.manager.shutdown()
  }

  @Test("a permission request times out when the injected clock passes the timeout, not before")
  func steppedClock() async throws {
    let clock = ManualClock()
    let gate = TestGate()
    let device = try await ScriptedDevice(resolver: InProcessResolver()) {
      $0.permission = gate
      $0.permissionRequestTimeout = .seconds(60)
      $0.clock = clock
    }
    let manager = device.manager
    let returned = Calls<Bool>()
    let subscribing = Task {
      defer { returned.append(true) }
      return try await manager.subscribe(configure: { $0.permissionRequestHandler = { _ in } })
    }
    #expect(await clock.untilSleepers { $0 == 1 })
    clock.advance(by: .seconds(59))
    for _ in 0..<100 { await Task.yield() }
    #expect(returned.all.isEmpty)
    #expect(clock.sleeperCount == 1)
    clock.advance(by: .seconds(1))
    let subscription = try await subscribing.value
    #expect(subscription.status == .paused)
    #expect(gate.recorded.isEmpty)
    await manager.shutdown()
  }
}
