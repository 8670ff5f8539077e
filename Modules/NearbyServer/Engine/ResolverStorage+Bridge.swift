@_spi(Resolver) public import Core
public import Foundation
@_spi(Resolver) public import Resolution
@_spi(Resolver) public import ServerStorage
import Strategy

/// What nearby-server's peer bridge needs of the storage: a device's handles as the device
/// knows them (to stand for it among peers), and a way to log events decided elsewhere (by
/// the bridge's peer resolver) in the device's own sequence.
extension ResolverStorage {
  /// A device's publications and subscriptions as the device sent them (ids unmasked, see
  /// `HandleScope`), each with the TTL it has left at `now`; nil when the device is unknown.
  /// - Throws: the database's error.
  @_spi(Resolver) public func handles(of device: DeviceID, now: Date) async throws
    -> (publish: [PublicationSpec], subscribe: [SubscriptionSpec])?
  {
    try await read { tx in
      guard let record = try tx.resolution.devices.device(device) else { return nil }
      let scope = HandleScope(record)
      let publish = try tx.resolution.handles.publications(on: device).compactMap { publication in
        Self.remaining(publication.strategy, until: publication.expiresAt, now: now).map {
          PublicationSpec(
            id: scope?(publication.id) ?? publication.id, message: publication.message,
            strategy: $0)
        }
      }
      let subscribe = try tx.resolution.handles.subscriptions(on: device).compactMap {
        subscription in
        Self.remaining(subscription.strategy, until: subscription.expiresAt, now: now).map {
          SubscriptionSpec(
            id: scope?(subscription.id) ?? subscription.id, namespace: subscription.namespace,
            type: subscription.type, strategy: $0, deviceTypes: subscription.deviceTypes)
        }
      }
      return (publish, subscribe)
    }
  }

  /// `strategy` with the TTL left until `expiresAt` (nil: never expires); nil when none is left.
  private static func remaining(_ strategy: Strategy, until expiresAt: Date?, now: Date)
    -> Strategy?
  {
    guard let expiresAt else { return strategy }
    guard let ttl = try? TTL(seconds: min(expiresAt.timeIntervalSince(now), TTL.maximumSeconds))
    else { return nil }
    var strategy = strategy
    strategy.ttl = ttl
    return strategy
  }

  /// Logs events decided outside this storage's engine for its devices, numbered in each
  /// device's sequence; the events name handles as the device knows them (they are stored
  /// masked, as the engine's). Returns the events logged (those of devices still here).
  /// - Throws: the database's error.
  @_spi(Resolver) public func logEvents(
    _ events: [DeviceEvent], configuration: ResolutionConfiguration, now: Date
  ) async throws -> [DeviceEvent] {
    guard !events.isEmpty else { return [] }
    return try await transaction { tx in
      try tx.locks.lockDevices(Set(events.map(\.device)))
      var scopes: [DeviceID: HandleScope?] = [:]
      let masked = try events.map { event in
        if scopes[event.device] == nil {
          scopes[event.device] = .some(
            try tx.resolution.devices.device(event.device).flatMap(HandleScope.init))
        }
        guard let scope = scopes[event.device] ?? nil else { return event }
        var stored = event
        stored.event = scope(event.event)
        return stored
      }
      let sequenced = try ResolutionEngine(store: tx.resolution, configuration: configuration)
        .sequence(masked)
      try tx.eventLog.appendEvents(sequenced, at: now)
      return sequenced
    }
  }
}
