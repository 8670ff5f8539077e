import Core
import Foundation
import LANMulticast
import Logging
import PeerResolution
import ResolverClient
import Strategy
import Synchronization

/// Devices on one LAN segment (loopback) for `nearby bench lan-peer`: managers with the LAN
/// medium on lo, one port for all, each with its own peer resolver over its own counted LAN
/// peer transport (peer mode) or all with the resolver server (server mode).
struct LANPeerSegment {
  enum Mode: String, Encodable, CaseIterable, Sendable {
    case peer, server
  }

  let mode: Mode
  let serverURL: URL
  /// The LAN medium's announce interval on every device.
  let announceInterval: Duration
  /// How often the LAN medium reports a token it keeps hearing, on every device.
  let sightingInterval: Duration
  let logger: Logger
  /// Found handlers record here, by message text.
  let founds = FoundTimes()
  private let lanPort = UInt16.random(in: 40_001...60_000)
  /// Below the ephemeral range, so no transport's kernel-chosen unicast port takes it.
  private let groupPort = UInt16.random(in: 10_000...19_999)
  private let apiKey: String
  private(set) var managers: [MessageManager] = []
  /// Every device's peer resolver (peer mode).
  private(set) var resolvers: [PeerResolver] = []
  /// What every device's peer transport sent.
  private let traffic = CountingPeerTransport.Tally()
  private var subscriptions: [Subscription] = []

  init(
    mode: Mode, serverURL: URL, serverKey: String, announceInterval: Duration,
    sightingInterval: Duration, logger: Logger
  ) {
    self.mode = mode
    self.serverURL = serverURL
    self.announceInterval = announceInterval
    self.sightingInterval = sightingInterval
    self.logger = logger
    // Peer mode: a project of its own, so an earlier run's stragglers on lo are another one.
    apiKey = mode == .peer ? "bench-peer-\(UUID().uuidString)" : serverKey
  }

  /// Starts one more device, subscribed to the bench's type when `subscribing`.
  mutating func addDevice(subscribing: Bool) async throws -> MessageManager {
    var medium = LANMulticastConfiguration(
      port: lanPort, interface: "lo", announceInterval: announceInterval,
      sightingInterval: sightingInterval)
    let resolver: ResolverChoice
    var mediums: [MediumProvider] = [.lan(medium)]
    switch mode {
    case .peer:
      // The project's announcement key, as `nearby` gives its LAN medium in peer mode.
      medium.sharedKey = try LANMulticastKey(bytes: PeerKeys(apiKey: apiKey).announcementKey)
      let traffic = traffic
      // Every device here sends from 127.0.0.1, which the per-host limit (there so that one
      // machine cannot flood a device from many ports) would take for one machine: lifted,
      // as the server bench lifts its per-address limits. The per-sender limits stay.
      var configuration = PeerResolverConfiguration()
      configuration.ratePerHost = 1_000_000
      configuration.burstPerHost = 1_000_000
      let assembly = try await PeerResolver.assemble(
        [
          PeerCarrier.lan(
            medium: medium, transport: LANPeerConfiguration(groupPort: groupPort, interface: "lo")
          ).wrapped(transport: { CountingPeerTransport($0, into: traffic) })
        ], configuration: configuration, logger: logger)
      resolver = .peer(assembly.resolver)
      resolvers.append(assembly.resolver)
      mediums = assembly.mediums
    case .server:
      resolver = .server(serverURL, credentialStore: InMemoryCredentialStore(), logger: logger)
    }
    let manager = try await MessageManager(
      apiKey: apiKey,
      configuration: .init(resolver: resolver, mediums: mediums, logger: logger))
    managers.append(manager)
    if subscribing {
      let founds = founds
      subscriptions.append(
        try await manager.subscribe(
          onFound: { message in founds.record(message.text ?? "") }, onLost: nil
        ) {
          $0.strategy = Strategy(mediums: .lan)
          $0.type = "bench"
        })
    }
    return manager
  }

  /// What every device's peer resolver counted, summed: drops by reason, sends refused,
  /// local refreshes.
  func resolverCounters() async -> PeerCounters {
    var sum = PeerCounters()
    for resolver in resolvers {
      let counters = await resolver.counters()
      sum.received += counters.received
      sum.accepted += counters.accepted
      sum.droppedRateLimited += counters.droppedRateLimited
      sum.droppedHostRateLimited += counters.droppedHostRateLimited
      sum.droppedStale += counters.droppedStale
      sum.droppedReplayed += counters.droppedReplayed
      sum.refusedSends += counters.refusedSends
      sum.outboxOverflows += counters.outboxOverflows
      sum.localRefreshes += counters.localRefreshes
      sum.hearingLapses += counters.hearingLapses
      sum.probes += counters.probes
      sum.whoHasSent += counters.whoHasSent
      sum.sent += counters.sent
      sum.challenged += counters.challenged
      sum.ignored += counters.ignored
      sum.unchangedAnswers += counters.unchangedAnswers
      sum.handlesWanted += counters.handlesWanted
      sum.droppedUnauthenticated += counters.droppedUnauthenticated
      sum.droppedMalformed += counters.droppedMalformed
    }
    return sum
  }

  /// Starts counting the peer exchange's traffic from zero.
  func resetCounts() { traffic.reset() }

  /// What every device's peer transport sent since ``resetCounts()``.
  var sent: CountingPeerTransport.Totals { traffic.sent }

  /// Cancels the subscriptions and shuts every device down, at once.
  func shutdown() async {
    for subscription in subscriptions { await subscription.cancel() }
    await withTaskGroup(of: Void.self) { group in
      for manager in managers { group.addTask { await manager.shutdown() } }
    }
  }
}

/// When each message was found, by its text (one instant per subscriber that found it).
/// Found handlers run on the managers' actors; a mutex guards the table.
final class FoundTimes: Sendable {
  private let table = Mutex<[String: [ContinuousClock.Instant]]>([:])

  func record(_ text: String) {
    let now = ContinuousClock.now
    table.withLock { $0[text, default: []].append(now) }
  }

  func instants(of text: String) -> [ContinuousClock.Instant] { table.withLock { $0[text] ?? [] } }

  func count(prefix: String) -> Int {
    table.withLock { $0.filter { $0.key.hasPrefix(prefix) }.reduce(0) { $0 + $1.value.count } }
  }
}
