@_spi(Resolver) public import Core
public import Foundation
@_spi(Resolver) public import Resolution
@_spi(Resolver) public import ServerStorage
import Synchronization

/// The resolution engine's operations, each one transaction on the storage that locks what
/// it changes (on PostgreSQL) and appends the events it causes to the log: the one way the
/// server, and anything else that shares the database, runs the engine. A body passed to
/// `ResolverStorage/transaction(_:)` that runs the engine by hand must do the same.
extension ResolverStorage {
  /// Registers a device in `project`.
  /// - Throws: the database's error.
  @_spi(Resolver) public func register(
    project: String, configuration: ResolutionConfiguration, now: Date
  ) async throws -> DeviceCredentials {
    try await transaction { tx in
      try ResolutionEngine(store: tx.resolution, configuration: configuration)
        .register(project: project, now: now)
    }
  }

  /// Applies a report (see `ResolutionEngine.report(_:from:now:sweeping:)`) and logs its
  /// events. On a storage that `runsConcurrently` the report's devices are locked first and
  /// due deadlines are left to ``sweep(configuration:now:limit:)``; on SQLite the report
  /// handles due deadlines, and skips looking when the storage's `DeadlineHint` says none
  /// is due. On PostgreSQL a report that only refreshes sightings still fresh (the common
  /// one) is applied in one statement, the device authenticated first against its row as
  /// this instance kept it from its last report (or as read, one round trip more); when that
  /// statement cannot tell it changes nothing, and the report runs as any other, with the
  /// same outcome.
  /// - Parameter authorize: called with the authenticated device before anything is locked
  ///   or changes; what it throws ends the transaction (the server checks the API key's
  ///   project and takes the device's rate budget).
  /// The device's publication and subscription ids are stored under its `HandleScope`; the
  /// answer's events, and `deviceEvents` (other devices' events), name each device's ids as
  /// it sent them.
  /// - Throws: `ResolverError` for bad credentials or an invalid report, what `authorize`
  ///   throws, or the database's error.
  @_spi(Resolver) public func report(
    _ report: Report, from credentials: DeviceCredentials,
    configuration: ResolutionConfiguration, now: Date,
    authorize: @escaping @Sendable (DeviceRecord) throws -> Void = { _ in }
  ) async throws -> (answer: ReportAnswer, deviceEvents: [DeviceEvent]) {
    var authorize = authorize
    if let refreshing = self as? any RefreshingStorage, refreshing.refreshesReports {
      switch RefreshReport.route(
        report, from: credentials.id, configuration: configuration, now: now)
      {
      case .general(let detour):
        refreshing.reportRoutes.note(.general(detour))
      case .refresh(let refresh):
        switch try await refreshing.refresh(
          refresh, credentials: credentials, authorize: authorize)
        {
        case .answered(let answer):
          refreshing.reportRoutes.note(.refreshed)
          return (answer, [])
        case .detour(let detour, let authorized):
          refreshing.reportRoutes.note(.general(detour))
          // `authorize` ran for this request (it takes the device's rate budget): not again.
          // It judged the device's id and project, which never change.
          if authorized { authorize = { _ in } }
        }
      }
    }
    return try await generalReport(
      report, from: credentials, configuration: configuration, now: now, authorize: authorize)
  }

  /// A report run by the engine over a transaction (see ``report(_:from:configuration:now:authorize:)``).
  private func generalReport(
    _ report: Report, from credentials: DeviceCredentials,
    configuration: ResolutionConfiguration, now: Date,
    authorize: @escaping @Sendable (DeviceRecord) throws -> Void
  ) async throws -> (answer: ReportAnswer, deviceEvents: [DeviceEvent]) {
    let concurrent = runsConcurrently
    let cautious = CautiousFlag()
    return try await transaction { tx in
      let engine = ResolutionEngine(store: tx.resolution, configuration: configuration)
      // Authenticated before anything is locked: a request that is not the device's (another
      // project's key, no secret) reads one row and holds nothing up.
      let device = try engine.authenticate(credentials)
      try authorize(device)
      // The device's ids as stored (see HandleScope); the answer names them as it sent them.
      let scope = HandleScope(device)
      let sent = report
      let report = scope.map { $0(sent) } ?? sent
      do {
        try tx.locks.prepare(
          forReport: report, from: credentials.id, now: now, lostAfter: configuration.lostAfter,
          earliestHeard: configuration.earliestHeard(now: now),
          cautious: cautious.isSet)
      } catch SQLStorageError.lockBusy {
        cautious.set()  // the storage runs the transaction again: then lock all up front
        throw SQLStorageError.lockBusy
      }
      // One writer: the report handles due deadlines too, unless none can be due.
      let sweeping = !concurrent && tx.deadlinesMayBeDue(at: now)
      let (answer, others): (ReportAnswer, [DeviceEvent])
      do {
        (answer, others) = try engine.report(
          report, from: credentials, now: now, sweeping: sweeping)
      } catch ResolverError.invalidReport(let why) {
        throw ResolverError.invalidReport(scope?.unmaskingIDs(in: why, of: sent) ?? why)
      }
      if sweeping { try tx.noteNextDeadline() }
      try tx.eventLog.appendEvents(
        answer.events.map {
          DeviceEvent(device: credentials.id, sequence: $0.sequence, event: $0.event)
        } + others, at: now)
      let theirs = try tx.eventLog.unmasked(others)
      guard let scope else { return (answer, theirs) }
      var unmasked = answer
      unmasked.events = answer.events.map { scope($0) }
      return (unmasked, theirs)
    }
  }

  /// Removes a device and everything it published and subscribed to; returns (and logs) the
  /// `lost` events of its subscribers.
  /// - Throws: `ResolverError` for bad credentials, what `authorize` throws, or the
  ///   database's error.
  @_spi(Resolver) public func unregister(
    _ credentials: DeviceCredentials, configuration: ResolutionConfiguration, now: Date,
    authorize: @escaping @Sendable (DeviceRecord) throws -> Void = { _ in }
  ) async throws -> [DeviceEvent] {
    try await transaction { tx in
      let engine = ResolutionEngine(store: tx.resolution, configuration: configuration)
      // Authenticated before anything is locked, as for a report.
      try authorize(engine.authenticate(credentials))
      try tx.locks.lockDevices(forUnregistering: credentials.id)
      let events = try engine.unregister(credentials, now: now)
      try tx.eventLog.appendEvents(events, at: now)
      return try tx.eventLog.unmasked(events)
    }
  }

  /// Removes up to `limit` devices that have not reported for
  /// `ResolutionConfiguration/deviceExpiry`, each in its own transaction with what it
  /// touches locked (as unregistering does), and logs the `lost` events of their neighbours.
  /// - Throws: the database's error (devices removed before it stay removed).
  @_spi(Resolver) public func expireSilentDevices(
    configuration: ResolutionConfiguration, now: Date, limit: Int = 100
  ) async throws -> (removed: Int, events: [DeviceEvent]) {
    let silent = try await read { tx in
      try ResolutionEngine(store: tx.resolution, configuration: configuration)
        .silentDevices(now: now, limit: limit)
    }
    var events: [DeviceEvent] = []
    var removed = 0
    for id in silent {
      if Task.isCancelled { break }
      let expired = try await transaction { tx -> [DeviceEvent]? in
        try tx.locks.lockDevices(forUnregistering: id)
        let engine = ResolutionEngine(store: tx.resolution, configuration: configuration)
        guard try tx.resolution.devices.device(id) != nil else { return nil }
        let events = try engine.expire(id, now: now)
        // It reported since it was listed.
        if try tx.resolution.devices.device(id) != nil { return nil }
        try tx.eventLog.appendEvents(events, at: now)
        return try tx.eventLog.unmasked(events)
      }
      if let expired {
        removed += 1
        events += expired
      }
    }
    return (removed, events)
  }

  /// Handles deadlines due by `now` (lost after silence, TTL expiry, token retirement) and
  /// logs their events. On SQLite: all of them, in one transaction. On a storage that
  /// `runsConcurrently`: one deadline per transaction, with the devices it concerns locked,
  /// at most `limit` of them (the rest wait for the next sweep, so one sweep's work is
  /// bounded); other instances' sweepers take other deadlines meanwhile.
  /// - Throws: the database's error (deadlines handled before it stay handled).
  @_spi(Resolver) public func sweep(
    configuration: ResolutionConfiguration, now: Date, limit: Int = 10_000
  ) async throws -> [DeviceEvent] {
    guard runsConcurrently else {
      return try await transaction { tx in
        let events = try ResolutionEngine(store: tx.resolution, configuration: configuration)
          .sweep(now: now)
        try tx.eventLog.appendEvents(events, at: now)
        try tx.noteNextDeadline()
        return try tx.eventLog.unmasked(events)
      }
    }
    var events: [DeviceEvent] = []
    for _ in 0..<max(limit, 1) {
      if Task.isCancelled { break }
      let handled = try await transaction { tx -> [DeviceEvent]? in
        guard let deadline = try tx.resolution.deadlines.popDeadline(dueAt: now) else { return nil }
        try tx.locks.lockDevices(for: deadline, now: now, lostAfter: configuration.lostAfter)
        let events = try ResolutionEngine(store: tx.resolution, configuration: configuration)
          .handle(deadline, now: now)
        try tx.eventLog.appendEvents(events, at: now)
        return try tx.eventLog.unmasked(events)
      }
      guard let handled else { break }
      events += handled
    }
    return events
  }
}

/// Set once a report's transaction met a busy row it would not wait for: its next attempt
/// locks every device up front.
private final class CautiousFlag: Sendable {
  private let value = Mutex(false)
  var isSet: Bool { value.withLock { $0 } }
  func set() { value.withLock { $0 = true } }
}
