@_spi(Resolver) import Core
import Foundation
import Logging
@_spi(Resolver) import Resolution
import ResolverAPI
@_spi(Resolver) import ResolverWire
@_spi(Resolver) import ServerStorage

/// The API's operations (openapi.yaml), each one database transaction around the resolution
/// engine. Nothing is kept between requests but caches, so instances can share a database.
struct ResolverHandler: APIProtocol {
  let storage: any ResolverStorage
  let configuration: ResolverServerConfiguration
  let hub: EventHub
  let metrics: ServerMetrics
  let health: HealthState
  let eidIndexes: EIDIndexCache
  let quotas: QuotaState
  let observations: ObservationThrottle
  /// The request rates; the handler takes a device's budget once the device authenticated.
  let limits: RequestLimits
  /// The event streams open, capped per key and per address.
  let streams: EventStreamCounts
  /// Per-project counts for the console.
  let activity: ProjectActivity
  /// The peer network's bridge, told of its project's reports and unregistrations.
  let bridge: PeerBridge?
  let logger: Logger
  let now: @Sendable () -> Date

  // MARK: Devices

  func registerDevice(_ input: Operations.RegisterDevice.Input) async throws
    -> Operations.RegisterDevice.Output
  {
    let context = try RequestContext.required()
    let resolution = configuration.resolution
    let now = now()
    let maximum = configuration.projectQuotas.maximumDevices
    let held = try await read { store in try store.projects.deviceCount(project: context.project) }
    guard held < maximum else {
      throw APIFailure.limitExceeded(
        "the project has \(held) devices registered, its most (\(maximum)); devices that "
          + "stop reporting expire, or unregister some")
    }
    let credentials = try await answering {
      try await storage.register(project: context.project, configuration: resolution, now: now)
    }
    metrics.devicesRegistered.increment()
    logger.debug("device registered", metadata: ["device": "\(credentials.id)"])
    return .created(
      .init(body: .json(.init(id: credentials.id.description, secret: credentials.secret))))
  }

  func unregisterDevice(_ input: Operations.UnregisterDevice.Input) async throws
    -> Operations.UnregisterDevice.Output
  {
    let credentials = try deviceCredentials(input.path.id)
    let project = try RequestContext.required().project
    let resolution = configuration.resolution
    let now = now()
    let events = try await answering {
      try await storage.unregister(
        credentials, configuration: resolution, now: now,
        authorize: authorizeDevice(project: project))
    }
    hub.wake(Set(events.map(\.device)))
    if let bridge, bridge.project == project { bridge.forget(credentials.id) }
    return .noContent(.init())
  }

  // MARK: Reports

  func report(_ input: Operations.Report.Input) async throws -> Operations.Report.Output {
    let credentials = try deviceCredentials(input.path.id)
    let project = try RequestContext.required().project
    guard case .json(let wire) = input.body else {
      throw APIFailure.badRequest("the body must be application/json")
    }
    let now = now()
    let report: Report
    do { report = try wire.report(receivedAt: now) } catch let error as WireError {
      throw error.isOverLimit
        ? APIFailure.limitExceeded(error.description) : APIFailure.badRequest(error.description)
    }
    if !report.publish.isEmpty { try await checkStoredBytes(project: project) }
    let resolution = configuration.resolution
    let (answer, others) = try await answering {
      try await storage.report(
        report, from: credentials, configuration: resolution, now: now,
        authorize: authorizeDevice(project: project))
    }
    metrics.reports.increment()
    activity.reported(project: project)
    metrics.sightings.increment(by: report.sightings.count)
    if !others.isEmpty { hub.wake(Set(others.map(\.device))) }
    if let bridge, bridge.project == project {
      bridge.observe(
        device: credentials.id, report: report, token: answer.directives.token,
        tokenExpiresIn: answer.directives.tokenExpiresIn, at: now)
    }
    return .ok(.init(body: .json(.init(answer))))
  }

  // MARK: Helpers

  /// The path's device id with the request's device secret.
  func deviceCredentials(_ id: String) throws -> DeviceCredentials {
    guard let device = DeviceID(id) else {
      throw APIFailure.badRequest("'\(id)' is not a device id (a UUID)")
    }
    guard let secret = try RequestContext.required().deviceSecret, !secret.isEmpty else {
      throw APIFailure.forbidden("missing X-Nearby-Device-Secret header")
    }
    return DeviceCredentials(id: device, secret: secret)
  }

  /// What a device's request must pass once the device authenticated, before anything is
  /// locked: its project is the key's, and it has rate budget left. A request that does not
  /// authenticate as the device never reaches this, so it costs only the caller's budgets
  /// (key, address), never the device's.
  /// - Throws: 404 (as an unknown device) for another project's device, 429 past the device's
  ///   rate.
  func authorizeDevice(project: String) -> @Sendable (DeviceRecord) throws -> Void {
    let limiter = limits.perDevice
    return { device in
      try Self.checkProject(of: device, is: project)
      if let wait = limiter.take(device.id.description) {
        throw APIFailure.rateLimited(retryAfter: wait, subject: "this device")
      }
    }
  }

  /// A device of another project is reported as unknown: nothing crosses projects.
  static func checkProject(of device: DeviceRecord, is project: String) throws {
    guard device.project == project else { throw ResolverError.unknownDevice(device.id) }
  }

  /// A transaction whose errors become answers: the resolver's refusals as 4xx, the
  /// database's failures as 503.
  func transaction<T: Sendable>(_ body: @escaping @Sendable (SQLTransaction) throws -> T)
    async throws
    -> T
  {
    try await answering { try await storage.transaction(body) }
  }

  /// Runs `work` (storage calls), turning its errors into answers as ``transaction(_:)`` does.
  func answering<T: Sendable>(_ work: () async throws -> T) async throws -> T {
    do {
      return try await work()
    } catch let error as ResolverError {
      throw Self.failure(for: error)
    } catch let error as BeaconInputError {
      throw Self.failure(for: error)
    } catch let failure as APIFailure {
      throw failure
    } catch {
      health.recordFailure()
      logger.warning(
        "database failure answered with 503", metadata: ["error": "\(String(reflecting: error))"])
      throw APIFailure.unavailable("the database did not answer; try again")
    }
  }

  /// A read-only transaction, with the same error answers.
  func read<T: Sendable>(_ body: @escaping @Sendable (SQLTransaction) throws -> T) async throws -> T
  {
    do {
      return try await storage.read(body)
    } catch let failure as APIFailure {
      throw failure
    } catch {
      health.recordFailure()
      logger.warning(
        "database failure answered with 503", metadata: ["error": "\(String(reflecting: error))"])
      throw APIFailure.unavailable("the database did not answer; try again")
    }
  }

  /// Refuses what would store more for a project over its stored-bytes quota.
  /// - Throws: 422 naming the quota.
  func checkStoredBytes(project: String) async throws {
    guard let held = await quotas.storedBytesOverQuota(project: project) else { return }
    throw APIFailure.limitExceeded(
      "the project stores \(held) bytes of messages and attachments, over its quota of "
        + "\(configuration.projectQuotas.maximumStoredBytes); unpublish or delete some")
  }

  static func failure(for error: ResolverError) -> APIFailure {
    switch error {
    case .invalidAPIKey: .unauthorized(error.description)
    // One answer for both: whoever lacks the secret cannot tell whether the id exists (in
    // this project or another).
    case .unknownDevice(let id), .wrongSecret(let id):
      .notFound("device \(id) is not registered, or the secret is not its secret")
    case .invalidReport(let why): .limitExceeded(why)
    case .unavailable(let why): .unavailable(why)
    }
  }
}
