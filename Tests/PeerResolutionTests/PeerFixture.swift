@_spi(Resolver) import Core
import Foundation
import MediumTestKit
import PeerResolution
import Resolution
import Strategy
import Synchronization
import Testing
import TestSupport
import Tokens
import NearbyTesting

/// The time every resolver of a test decides by; moved by hand.
final class TestTime: Sendable {
  private let state = Mutex(Date(timeIntervalSince1970: 1_800_000_000))
  var now: Date { state.withLock { $0 } }
  func advance(_ seconds: Double) { state.withLock { $0 = $0.addingTimeInterval(seconds) } }
}

/// One device with its own peer resolver on the shared in-memory network.
final class PeerNode: Sendable {
  let resolver: PeerResolver
  let transport: MemoryPeerTransport
  let device: DeviceCredentials
  let events: StreamRecorder<SequencedEvent>
  let time: TestTime
  /// How far this node's clock is from the test's time, in seconds.
  let clockOffset: Double
  /// Every node of the fixture, to run them all to rest.
  let world: PeerRest
  var address: PeerAddress { transport.address }
  /// This node's clock.
  var now: Date { time.now.addingTimeInterval(clockOffset) }

  init(
    resolver: PeerResolver, transport: MemoryPeerTransport, device: DeviceCredentials,
    events: StreamRecorder<SequencedEvent>, time: TestTime, clockOffset: Double = 0,
    world: PeerRest
  ) {
    self.resolver = resolver
    self.transport = transport
    self.device = device
    self.events = events
    self.time = time
    self.clockOffset = clockOffset
    self.world = world
  }

  func token() async throws -> Token {
    try await resolver.report(Report(), from: device).directives.token
  }

  /// Reports to this node's resolver and records the events of the answer with the stream's.
  @discardableResult
  func report(_ report: Report) async throws -> ReportAnswer {
    let answer = try await resolver.report(report, from: device)
    answerEvents.withLock { $0 += answer.events }
    return answer
  }

  private let answerEvents = Mutex<[SequencedEvent]>([])

  /// Every event so far (answers and stream), in sequence order.
  var allEvents: [SequencedEvent] {
    (answerEvents.withLock { $0 } + events.elements).sorted { $0.sequence < $1.sequence }
  }

  @discardableResult
  func publish(
    _ text: String, type: String = "name", strategy: Strategy = .default
  ) async throws -> PublicationID {
    let id = PublicationID.random()
    try await report(
      Report(publish: [
        PublicationSpec(id: id, message: Message(text: text, type: type), strategy: strategy)
      ]))
    return id
  }

  @discardableResult
  func subscribe(type: String? = nil, strategy: Strategy = .default) async throws
    -> SubscriptionID
  {
    let id = SubscriptionID.random()
    try await report(Report(subscribe: [SubscriptionSpec(id: id, type: type, strategy: strategy)]))
    return id
  }

  /// What `other`'s mediums transmit now: its token, and the digest of its handles.
  func directives() async throws -> Directives {
    try await resolver.report(Report(), from: device).directives
  }

  /// This node hears `other`'s token on `medium`, with its address as the way back or none,
  /// and the digest of `other`'s handles beside it where the medium carries one (LAN, as the
  /// LAN medium does in peer mode; `digest: false` leaves it out).
  func hear(
    _ other: PeerNode, on medium: DiscoveryMediums = .ble, withReturnPath: Bool = true,
    digest: Bool = true
  ) async throws {
    let transmitted = try await other.directives()
    try await report(
      Report(sightings: [
        Sighting(
          token: transmitted.token, medium: medium, time: now,
          returnPath: withReturnPath ? other.address : nil,
          digest: digest && medium == .lan ? transmitted.digest : nil)
      ]))
  }

  /// The texts of the found events so far.
  var found: [String] {
    allEvents.compactMap { if case .found(_, let m) = $0.event { m.text } else { nil } }
  }
  /// The texts of the lost events so far.
  var lost: [String] {
    allEvents.compactMap { if case .lost(_, let m) = $0.event { m.text } else { nil } }
  }

  /// Runs the network to rest, then tells whether every question this node asked was
  /// answered. Time is moved by hand, so nothing times out meanwhile; call it before
  /// ``PeerFixture/advance(_:_:)`` moves past the query timeout.
  func answered() async -> Bool {
    await world.settle()
    return await resolver.waitingQuestions == 0
  }

  /// Runs the network to rest, then judges `condition` of this node.
  func settled(_ condition: (PeerNode) -> Bool) async -> Bool {
    await world.settle()
    return condition(self)
  }
}

/// The nodes of one fixture and their network, run to rest together.
final class PeerRest: Sendable {
  let network: MemoryPeerNetwork
  private let nodes = Mutex<[PeerNode]>([])

  init(network: MemoryPeerNetwork) { self.network = network }

  func add(_ node: PeerNode) { nodes.withLock { $0.append(node) } }

  /// Returns once nothing is left to happen on the network (time stands still): every node
  /// handled what the network delivered to it, has nothing left to send and its recorder
  /// read every event, and no count moved between two looks. That is a wait for rest, not
  /// for an outcome: what the test asserts next does not depend on how loaded the machine
  /// is. A network that never comes to rest is a bug: 60 s of real time in which no count
  /// moved is recorded as one (a loaded machine that moves slowly is given the time).
  func settle() async {
    var deadline = ContinuousClock.now + .seconds(60)
    var previous: [Int]?
    var lastSeen: [Int] = []
    while true {
      var counts: [Int] = []
      var atRest = true
      for node in nodes.withLock({ $0 }) {
        let progress = await node.resolver.progress()
        let delivered = await network.delivered(to: node.address)
        let streamed = progress.eventsStreamed[node.device.id] ?? 0
        let read = node.events.elements.count
        atRest =
          atRest && delivered == progress.datagramsHandled && progress.sendsPending == 0
          && read == streamed
        counts += [delivered, progress.datagramsHandled, progress.sendsPending, streamed, read]
      }
      if atRest, counts == previous { return }
      previous = atRest ? counts : nil
      if counts != lastSeen {
        lastSeen = counts
        deadline = ContinuousClock.now + .seconds(60)
      }
      guard ContinuousClock.now < deadline else {
        Issue.record("the peer network stood still for 60 s short of rest: \(counts)")
        return
      }
      try? await Task.sleep(for: .milliseconds(1))
    }
  }
}

/// Devices on one in-memory network, deciding by one hand-moved time.
struct PeerFixture {
  let network: MemoryPeerNetwork
  let rest: PeerRest
  let time = TestTime()
  /// What the resolvers' ticks sleep on: never advanced, so they tick only when a test says.
  let clock = ManualClock()

  init(network: MemoryPeerNetwork = MemoryPeerNetwork()) {
    self.network = network
    rest = PeerRest(network: network)
  }

  func node(
    apiKey: String = "project-key", name: String = "node", lostAfter: Duration = .seconds(10),
    tokenLifetime: Duration = .seconds(120), clockOffset: Double = 0,
    configure: (inout PeerResolverConfiguration) -> Void = { _ in }
  ) async throws -> PeerNode {
    let transport = await network.makeTransport(name: name)
    let time = self.time
    var configuration = PeerResolverConfiguration(
      resolution: ResolutionConfiguration(lostAfter: lostAfter, tokenLifetime: tokenLifetime))
    configure(&configuration)
    let resolver = try PeerResolver(
      transports: [transport], configuration: configuration,
      now: { time.now.addingTimeInterval(clockOffset) }, clock: clock)
    let device = try await resolver.register(apiKey: apiKey)
    let events = StreamRecorder(try await resolver.events(for: device))
    let node = PeerNode(
      resolver: resolver, transport: transport, device: device, events: events, time: time,
      clockOffset: clockOffset, world: rest)
    rest.add(node)
    return node
  }

  /// Runs every node to rest (see ``PeerRest/settle()``).
  func settle() async { await rest.settle() }

  /// Moves time on, lets every resolver handle what fell due and runs the network to rest.
  func advance(_ seconds: Double, _ nodes: PeerNode...) async {
    time.advance(seconds)
    for node in nodes { await node.resolver.tick() }
    await settle()
  }

  /// Awaited teardown; then every send the shutdown drained is counted (sent or failed).
  func shutdown(_ nodes: PeerNode...) async {
    for node in nodes {
      await node.resolver.shutdown()
      let progress = await node.resolver.progress()
      #expect(progress.sendsPending == 0, "\(progress)")
    }
  }
}
