import Core
import Logging
import MediumTestKit
import Resolution
import NearbyTesting

/// Simulated devices on one in-memory air and one in-process resolver, with every found and
/// lost kept per device. `lostAfter` is long by default so that a loaded test machine does not
/// lose messages between adverts; tests of losing by silence set it short.
final class AirWorld: Sendable {
  let air: Air
  let resolver: InProcessResolver
  private let seen = FoundLostRecorder()

  init(lostAfter: Duration = .seconds(5), advertiseInterval: Duration = .milliseconds(50)) throws {
    var configuration = Air.Configuration()
    configuration.advertiseInterval = advertiseInterval
    air = Air(configuration: configuration)
    resolver = try InProcessResolver(configuration: .init(lostAfter: lostAfter))
  }

  func device(_ name: String, at x: Double = 0) async throws -> MessageManager {
    await air.place(name, at: Air.Position(x: x))
    return try await MessageManager(
      apiKey: "integration",
      configuration: .init(
        resolver: .inProcess(resolver), mediums: MediumProvider.air(air, device: name)))
  }

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
