@_spi(Resolver) import Core
import Foundation
@_spi(Resolver) import Resolution
import Strategy
import Tokens

/// An engine over the in-memory store with a clock the test moves by hand.
final class EngineFixture {
  let engine: ResolutionEngine<InMemoryResolutionStore>
  var now = Date(timeIntervalSince1970: 1_800_000_000)

  init(
    lostAfter: Duration = .seconds(10), tokenLifetime: Duration = .seconds(900),
    tokenGrace: Duration = .seconds(60),
    maximumHandlesPerDevice: Int = ResolutionConfiguration.defaultMaximumHandlesPerDevice,
    maximumNewNeighborsPerMinute: Int = ResolutionConfiguration.defaultMaximumNewNeighborsPerMinute
  ) {
    engine = ResolutionEngine(
      store: InMemoryResolutionStore(),
      configuration: ResolutionConfiguration(
        lostAfter: lostAfter, tokenLifetime: tokenLifetime, tokenGrace: tokenGrace,
        maximumHandlesPerDevice: maximumHandlesPerDevice,
        maximumNewNeighborsPerMinute: maximumNewNeighborsPerMinute))
  }

  func advance(_ seconds: Double) { now = now.addingTimeInterval(seconds) }

  func device(project: String = "p") throws -> DeviceCredentials {
    try engine.register(project: project, now: now)
  }

  func token(of device: DeviceCredentials) throws -> Token {
    try engine.report(Report(), from: device, now: now).answer.directives.token
  }

  @discardableResult
  func report(_ report: Report, from device: DeviceCredentials) throws -> (
    mine: [ResolverEvent], others: [DeviceEvent]
  ) {
    let (answer, deviceEvents) = try engine.report(report, from: device, now: now)
    return (answer.events.map(\.event), deviceEvents.unsequenced)
  }

  @discardableResult
  func publish(
    _ text: String, type: String = "name", namespace: String = "", strategy: Strategy = .default,
    on device: DeviceCredentials
  ) throws -> PublicationID {
    let id = PublicationID.random()
    try report(
      Report(publish: [
        PublicationSpec(
          id: id, message: Message(text: text, type: type, namespace: namespace),
          strategy: strategy)
      ]), from: device)
    return id
  }

  @discardableResult
  func subscribe(
    type: String? = nil, namespace: String = "", strategy: Strategy = .default,
    on device: DeviceCredentials
  ) throws -> SubscriptionID {
    let id = SubscriptionID.random()
    try report(
      Report(subscribe: [
        SubscriptionSpec(id: id, namespace: namespace, type: type, strategy: strategy)
      ]), from: device)
    return id
  }

  /// `hearer` hears `heard`'s token on `medium`; returns every event this caused.
  @discardableResult
  func sighting(
    by hearer: DeviceCredentials, of heard: DeviceCredentials, on medium: DiscoveryMediums = .ble
  ) throws -> [DeviceEvent] {
    let token = try self.token(of: heard)
    let (mine, others) = try report(
      Report(sightings: [Sighting(token: token, medium: medium, time: now)]), from: hearer)
    return mine.map { DeviceEvent(device: hearer.id, event: $0) } + others
  }

  func sweep() throws -> [DeviceEvent] { try engine.sweep(now: now).unsequenced }

  var counts: ResolutionCounts { engine.store.counts() }
}

extension [DeviceEvent] {
  /// The events with their sequence numbers cleared, to compare with expected values
  /// (sequencing has tests of its own).
  var unsequenced: [DeviceEvent] { map { DeviceEvent(device: $0.device, event: $0.event) } }

  var found: [String] {
    compactMap { if case .found(_, let m) = $0.event { m.text } else { nil } }
  }
  var lost: [String] {
    compactMap { if case .lost(_, let m) = $0.event { m.text } else { nil } }
  }
}
