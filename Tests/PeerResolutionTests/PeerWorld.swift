import Core
import Foundation
import MediumTestKit
import PeerResolution
import Resolution
import Strategy
import Synchronization
import NearbyTesting

/// Simulated devices on one in-memory air and one in-memory peer network, each with its own
/// manager and its own peer resolver (no shared resolver anywhere), with every found and lost
/// kept per device. The resolvers run on the real clock: these tests wait with
/// ``until(timeout:_:)`` (up to ``patience``), `lostAfter` is long by default (10 s) so that
/// a scheduling stall on a loaded machine cannot make a message flap between found and lost,
/// and a question waits half of it for its answer, so that an answer a loaded machine delays
/// is not asked again and backed off.
final class PeerWorld: Sendable {
  let air: Air
  let network = MemoryPeerNetwork()
  let lostAfter: Duration
  /// How long a test waits for what must happen: a plain `swift test` runs every target at
  /// once on two cores.
  static let patience: Duration = .seconds(30)
  private let seen = FoundLostRecorder()
  private let resolvers = Mutex<[String: PeerResolver]>([:])

  init(lostAfter: Duration = .seconds(10), advertiseInterval: Duration = .milliseconds(50)) {
    var configuration = Air.Configuration()
    configuration.advertiseInterval = advertiseInterval
    air = Air(configuration: configuration)
    self.lostAfter = lostAfter
  }

  /// A device at `x` with BLE and audio, and a LAN medium whose sightings carry the device's
  /// peer address when `lan` is set.
  func device(
    _ name: String, at x: Double = 0, apiKey: String = "peer-world", lan: Bool = false
  ) async throws -> MessageManager {
    await air.place(name, at: Air.Position(x: x))
    let transport = await network.makeTransport(name: name)
    var exchange = PeerExchangeStateMachine.Configuration()
    exchange.refreshInterval = lostAfter / 4
    exchange.queryTimeout = lostAfter / 2
    let resolver = try PeerResolver(
      transports: [transport],
      configuration: PeerResolverConfiguration(
        resolution: ResolutionConfiguration(lostAfter: lostAfter), exchange: exchange,
        tickInterval: .milliseconds(50)))
    resolvers.withLock { $0[name] = resolver }
    var mediums = MediumProvider.air(air, device: name)
    if lan {
      mediums.append(.air(air, device: name, medium: .lan, returnPath: transport.address))
    }
    return try await MessageManager(
      apiKey: apiKey, configuration: .init(resolver: .peer(resolver), mediums: mediums))
  }

  /// The peer resolver of `device`.
  func resolver(of device: String) -> PeerResolver? { resolvers.withLock { $0[device] } }

  func subscribe(
    _ manager: MessageManager, as name: String,
    configure: (inout SubscriptionParams) throws -> Void = { _ in }
  ) async throws -> Subscription {
    try await seen.subscribe(manager, as: name, configure: configure)
  }

  /// Waits until `condition` holds, asking it now and after each found or lost, for at most
  /// `timeout`; returns whether it held. `condition` reads this world:
  /// `world.until { world.found(by: "Bob") == ["Alice"] }`.
  func until(
    timeout: Duration = defaultWaitBound, _ condition: () throws -> Bool
  ) async rethrows -> Bool {
    try await seen.until(timeout: timeout, condition)
  }

  /// The texts of messages `device` found (or lost), in order.
  func found(by device: String) -> [String] { seen.found(by: device) }
  func lost(by device: String) -> [String] { seen.lost(by: device) }
}
