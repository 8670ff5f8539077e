@_spi(Resolver) import Core
import Foundation
import Logging
@_spi(Resolver) import Resolution
@_spi(Resolver) import ServerStorage
import ServiceLifecycle

/// Handles due deadlines (lost after silence, TTL expiry, token retirement) every sweep
/// interval, appends the events to the log and wakes the streams of this instance; prunes
/// the event log and removes devices silent past their expiry once a minute (at most 100 a
/// minute, so a backlog drains without stalling sweeps). With several instances on PostgreSQL each sweeps; every
/// deadline is taken by one of them (``ResolverStorage/sweep(configuration:now:limit:)``).
///
/// Ends the event streams of revoked API keys: every half
/// ``ResolverServerConfiguration/apiKeyCacheLifetime`` it asks the database whether the keys
/// of this instance's open streams are still active, so a key revoked anywhere (another
/// instance, `nearby-server keys revoke`, the console) loses its streams within that lifetime,
/// as it loses its new requests. A stream's own reads notice only at its next wake or
/// heartbeat, 15 s by default.
struct Sweeper: Sendable {
  let storage: any ResolverStorage
  let configuration: ResolverServerConfiguration
  let hub: EventHub
  let metrics: ServerMetrics
  let health: HealthState
  /// The rate limits, told how many instances share the database.
  let limits: RequestLimits
  /// The projects over their stored-bytes quota, found once a minute.
  let quotas: QuotaState
  /// This instance's name in the database's list of instances.
  let instance: String
  let logger: Logger
  let now: @Sendable () -> Date

  func run() async {
    var lastPrune = ContinuousClock.now
    var lastHeartbeat = ContinuousClock.now
    var lastKeyCheck = ContinuousClock.now
    while !Task.isCancelled, !Task.isShuttingDownGracefully {
      let prune = lastPrune.duration(to: .now) >= .seconds(60)
      if prune { lastPrune = .now }
      await sweepOnce(prune: prune)
      if lastHeartbeat.duration(to: .now) >= .seconds(5) {
        lastHeartbeat = .now
        await heartbeat()
      }
      if lastKeyCheck.duration(to: .now) >= configuration.apiKeyCacheLifetime / 2 {
        lastKeyCheck = .now
        await endStreamsOfRevokedKeys()
      }
      try? await Task.sleep(for: configuration.sweepInterval)
    }
    let instance = instance
    try? await storage.transaction { store in try store.instances.forgetInstance(instance) }
  }

  /// Finds the projects over their stored-bytes quota.
  func checkQuotas() async throws {
    let maximum = configuration.projectQuotas.maximumStoredBytes
    let usage = try await storage.read { store in try store.projects.projectUsage() }
    let over = usage.filter { $0.value.storedBytes > maximum }.mapValues(\.storedBytes)
    for (project, bytes) in over where await quotas.storedBytesOverQuota(project: project) == nil {
      logger.notice(
        "project over its stored-bytes quota",
        metadata: ["project": "\(project)", "bytes": "\(bytes)"])
    }
    await quotas.update(overStoredBytes: over)
  }

  /// Says this instance runs and divides the rate limits among the instances that do.
  func heartbeat() async {
    let (instance, now) = (instance, now())
    do {
      let count = try await storage.transaction { store in
        try store.instances.heartbeat(instance: instance, now: now)
      }
      limits.setInstances(count)
    } catch {
      logger.warning("heartbeat failed", metadata: ["error": "\(error)"])
    }
  }

  /// Ends the open event streams whose API key is no longer active (revoked, or gone).
  func endStreamsOfRevokedKeys() async {
    let keys = hub.keys
    guard !keys.isEmpty else { return }
    do {
      let revoked = try await storage.read { store in
        try keys.filter { try !store.apiKeys.isActiveAPIKey(id: $0) }
      }
      if !revoked.isEmpty {
        logger.info(
          "event streams of revoked keys ended", metadata: ["keys": "\(revoked.sorted())"])
      }
      hub.end(keys: revoked)
    } catch {
      // Tried again at the next check; the streams' own reads refuse the key meanwhile.
      logger.warning(
        "the keys of open event streams were not checked", metadata: ["error": "\(error)"])
    }
  }

  /// One sweep; returns the events it produced.
  @discardableResult
  func sweepOnce(prune: Bool = false) async -> [DeviceEvent] {
    let resolution = configuration.resolution
    let retention = configuration.eventRetention
    let now = now()
    do {
      var events = try await storage.sweep(configuration: resolution, now: now)
      if prune {
        try await storage.pruneEvents(before: now.addingTimeInterval(-retention.seconds))
        try await checkQuotas()
        let expired = try await storage.expireSilentDevices(configuration: resolution, now: now)
        if expired.removed > 0 {
          logger.info("removed silent devices", metadata: ["devices": "\(expired.removed)"])
        }
        events += expired.events
      }
      health.recordSuccess()
      metrics.sweeps.increment()
      if !events.isEmpty {
        metrics.sweepEvents.increment(by: events.count)
        hub.wake(Set(events.map(\.device)))
      }
      return events
    } catch {
      health.recordFailure()
      metrics.databaseErrors.increment()
      logger.warning("sweep failed", metadata: ["error": "\(error)"])
      return []
    }
  }
}
