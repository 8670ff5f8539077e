@_spi(Resolver) import Core
import Foundation
@_spi(Resolver) import Resolution
import Testing

/// A device keeps at most `maximumHandlesPerDevice` publications and as many subscriptions.
@Suite("Handles per device")
struct HandleLimitTests {
  @Test func aReportPastTheLimitIsRefusedAndOneThatMakesRoomIsNot() throws {
    let fixture = EngineFixture(maximumHandlesPerDevice: 3)
    let device = try fixture.device()
    let published = try (1...3).map { try fixture.publish("m\($0)", on: device) }
    #expect {
      try fixture.publish("m4", on: device)
    } throws: { error in
      guard case ResolverError.invalidReport(let why) = error else { return false }
      return why.contains("4 publications; the limit is 3")
    }
    // Unpublishing one in the same report makes room.
    let spec = PublicationSpec(
      id: .random(), message: Message(text: "m5", type: "name"), strategy: .default)
    try fixture.report(Report(publish: [spec], unpublish: [published[0]]), from: device)
    for _ in 1...3 { _ = try fixture.subscribe(on: device) }
    #expect(throws: ResolverError.self) { try fixture.subscribe(on: device) }
    // Another device has its own count.
    _ = try fixture.publish("other", on: try fixture.device())
  }

  /// The count after a report: an id withdrawn and made again in one report stays one; an id
  /// made that the device has already, or withdrawn that it does not have, changes nothing.
  @Test func aTallyCountsWhatAReportLeaves() {
    let tally = HandleTally(all: [1, 2, 3], among: [2, 3, 4, 5])
    #expect(tally == HandleTally(count: 3, present: [2, 3]))
    #expect(tally.after(removing: [], adding: [4]) == 4)
    #expect(tally.after(removing: [2], adding: [4, 5]) == 4)
    #expect(tally.after(removing: [2], adding: [2]) == 3)
    #expect(tally.after(removing: [5], adding: [3]) == 3)
    #expect(tally.after(removing: [2, 3, 4], adding: []) == 1)
  }

  /// The in-memory store counts as it saves and removes, and answers as the list would.
  @Test func theInMemoryStoresTallyMatchesItsList() throws {
    let store = InMemoryResolutionStore()
    let (a, b) = (DeviceID.random(), DeviceID.random())
    func subscription(_ device: DeviceID) -> SubscriptionRecord {
      SubscriptionRecord(
        id: .random(), device: device, project: "p", namespace: "", type: "t",
        strategy: .default, deviceTypes: .nearbyDevices, expiresAt: nil)
    }
    let onA = (0..<5).map { _ in subscription(a) }
    for record in onA + [subscription(b)] { store.handles.saveSubscription(record) }
    store.handles.saveSubscription(onA[0])  // saved again: still one
    _ = store.handles.removeSubscription(onA[1].id)
    let asked: Set<SubscriptionID> = [onA[0].id, onA[1].id, onA[2].id, .random()]
    let tally = store.handles.subscriptionTally(on: a, among: asked)
    #expect(try tally == HandleTally(all: store.handles.subscriptionIDs(on: a), among: asked))
    #expect(tally == HandleTally(count: 4, present: [onA[0].id, onA[2].id]))
    #expect(store.handles.subscriptionTally(on: b, among: asked).count == 1)
  }

  /// The in-process resolver takes the limit from its configuration: raised, one device keeps
  /// 300 subscriptions; by default (the server's policy), the 257th is refused.
  @Test func theInProcessResolversLimitIsConfigurableAndTheDefaultRefusesPast256() async throws {
    #expect(ResolutionConfiguration().maximumHandlesPerDevice == 256)
    #expect(ResolutionConfiguration.defaultMaximumHandlesPerDevice == 256)
    func subscriptions(_ count: Int) -> Report {
      Report(subscribe: (0..<count).map { SubscriptionSpec(id: .random(), type: "t\($0)") })
    }

    let raised = try InProcessResolver(
      configuration: ResolutionConfiguration(maximumHandlesPerDevice: 10_000))
    let many = try await raised.register(apiKey: "k")
    _ = try await raised.report(subscriptions(256), from: many)
    _ = try await raised.report(subscriptions(44), from: many)
    #expect(await raised.counts().subscriptions == 300)

    let standard = try InProcessResolver()
    let device = try await standard.register(apiKey: "k")
    _ = try await standard.report(subscriptions(256), from: device)
    await #expect {
      try await standard.report(subscriptions(1), from: device)
    } throws: { error in
      guard case ResolverError.invalidReport(let why) = error else { return false }
      return why.contains("257 subscriptions; the limit is 256")
    }
    #expect(await standard.counts().subscriptions == 256)
  }

  @Test func theLimitMustBePositive() {
    #expect(throws: ResolutionConfigurationError.self) {
      try ResolutionConfiguration(maximumHandlesPerDevice: 0).validate()
    }
  }
}
