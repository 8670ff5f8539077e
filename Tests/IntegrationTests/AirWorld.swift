import Core
import Logging
import MediumTestKit
import Resolution
import Synchronization

/// Simulated devices on one in-memory air and one in-process resolver, with every found and
/// lost kept per device. `lostAfter` is long by default so that a loaded test machine does not
/// lose messages between adverts; tests of losing by silence set it short.
final class AirWorld: Sendable {
  let air: Air
  let resolver: InProcessResolver
  private let seen = Mutex<[(device: String, event: SubscriptionEvent)]>([])

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
    try await manager.subscribe(
      onFound: { [self] in record(name, .found($0)) },
      onLost: { [self] in record(name, .lost($0)) },
      configure: configure)
  }

  private func record(_ device: String, _ event: SubscriptionEvent) {
    seen.withLock { $0.append((device, event)) }
  }

  /// The texts of messages `device` found (or lost), in order.
  func found(by device: String) -> [String] {
    seen.withLock { $0.compactMap { $0.device == device ? $0.event.foundText : nil } }
  }
  func lost(by device: String) -> [String] {
    seen.withLock { $0.compactMap { $0.device == device ? $0.event.lostText : nil } }
  }
}

extension SubscriptionEvent {
  var foundText: String? { if case .found(let m) = self { m.text } else { nil } }
  var lostText: String? { if case .lost(let m) = self { m.text } else { nil } }
}
