@_spi(Resolver) public import Core
public import Foundation
public import Logging

/// A resolver that runs inside the process: the resolution engine over the in-memory store.
///
/// Managers of one process that use the same instance find each other; ``shared`` is the
/// instance behind ``Core/ResolverChoice/embedded``. Time comes from the `now` closure
/// (the wall clock by default); deadlines (lost, TTL expiry) are handled by a task that sleeps
/// until the next one, or by calling ``sweep()``.
public actor InProcessResolver {
  /// The process-wide instance used by `.embedded` (default configuration, always valid).
  public static let shared = try! InProcessResolver()

  private let engine: ResolutionEngine<InMemoryResolutionStore>
  let now: @Sendable () -> Date
  /// Beacons registered with ``registerBeacon(apiKey:id:eid:attachments:)``, per project.
  var beacons = InProcessBeaconRegistry()
  private let logger: Logger
  private var streams: [DeviceID: AsyncStream<SequencedEvent>.Continuation] = [:]
  /// The sleep until the earliest deadline, in a group of its own so that a new, earlier
  /// deadline ends it.
  private var sweeper: WorkGroup?
  private var sweeperDeadline: Date?
  /// Tells a firing sweeper whether it is still the current one.
  private var sweeperGeneration: UInt64 = 0

  /// A resolver with its own state.
  /// - Parameters:
  ///   - configuration: lost-after, token lifetime and grace, and how many handles one device
  ///     may keep (``ResolutionConfiguration/maximumHandlesPerDevice``: the server's 256 by
  ///     default; raise it for a device that holds more, as the dispatch benchmark does).
  ///   - logger: where it logs (debug level for each report).
  ///   - now: the clock; tests pass a manual one and call ``sweep()``.
  /// - Throws: ``ResolutionConfigurationError`` for a configuration out of range.
  public init(
    configuration: ResolutionConfiguration = .init(),
    logger: Logger = Logger(label: "nearby.resolver"),
    now: @escaping @Sendable () -> Date = { Date() }
  ) throws(ResolutionConfigurationError) {
    try configuration.validate()
    self.engine = ResolutionEngine(store: InMemoryResolutionStore(), configuration: configuration)
    self.now = now
    self.logger = logger
  }

  /// Any non-empty API key is accepted; its text is the project.
  @_spi(Resolver) public func register(apiKey: String) async throws -> DeviceCredentials {
    guard !apiKey.isEmpty else { throw ResolverError.invalidAPIKey }
    let credentials = try engine.register(project: apiKey, now: now())
    armSweeper()
    logger.debug("device registered", metadata: ["device": "\(credentials.id)"])
    return credentials
  }

  @_spi(Resolver) public func report(_ report: Report, from device: DeviceCredentials) async throws
    -> ReportAnswer
  {
    let (answer, deviceEvents) = try engine.report(report, from: device, now: now())
    route(deviceEvents)
    armSweeper()
    return answer
  }

  @_spi(Resolver) public func events(for device: DeviceCredentials) async throws -> AsyncStream<
    SequencedEvent
  > {
    _ = try engine.authenticate(device)
    streams[device.id]?.finish()
    // Unbounded on purpose: found/lost must not be dropped; the manager reads it at once.
    let (stream, continuation) = AsyncStream.makeStream(
      of: SequencedEvent.self, bufferingPolicy: .unbounded)
    streams[device.id] = continuation
    return stream
  }

  @_spi(Resolver) public func unregister(_ device: DeviceCredentials) async throws {
    let deviceEvents = try engine.unregister(device, now: now())
    streams.removeValue(forKey: device.id)?.finish()
    route(deviceEvents)
    armSweeper()
    logger.debug("device unregistered", metadata: ["device": "\(device.id)"])
  }

  /// Handles every deadline due now (lost, expiry); the background task calls it too.
  public func sweep() {
    do {
      route(try engine.sweep(now: now()))
    } catch {
      // The in-memory store never throws; log rather than trap if that ever changes.
      logger.error("sweep failed", metadata: ["error": "\(error)"])
    }
    armSweeper()
  }

  /// The project of a registered device.
  func project(of device: DeviceCredentials) throws -> String {
    try engine.authenticate(device).project
  }

  /// How much the resolver holds (for tests and diagnostics).
  public func counts() -> ResolutionCounts { engine.store.counts() }

  private func route(_ deviceEvents: [DeviceEvent]) {
    for deviceEvent in deviceEvents {
      streams[deviceEvent.device]?.yield(deviceEvent.sequenced)
    }
  }

  /// Keeps one task sleeping until the earliest deadline.
  private func armSweeper() {
    guard let next = engine.store.deadlines.nextDeadline() else {
      sweeper?.end()
      sweeper = nil
      sweeperDeadline = nil
      return
    }
    if let current = sweeperDeadline, current <= next, sweeper != nil { return }
    sweeper?.end()
    sweeperDeadline = next
    sweeperGeneration &+= 1
    let generation = sweeperGeneration
    let delay = max(next.timeIntervalSince(now()), 0.001)
    let sleeping = WorkGroup()
    sweeper = sleeping
    sleeping.start { [weak self] in
      try? await Task.sleep(for: .seconds(delay))
      guard !Task.isCancelled, let self else { return }
      await self.sweeperFired(generation)
    }
  }

  private func sweeperFired(_ generation: UInt64) {
    // A sweeper replaced after it woke must not clear its successor.
    guard generation == sweeperGeneration else { return }
    sweeper = nil
    sweeperDeadline = nil
    sweep()
  }
}

@_spi(Resolver) extension InProcessResolver: Resolver {}

extension ResolverChoice {
  /// The process-wide in-process resolver: managers of this process that use it find each
  /// other, with no server.
  public static var embedded: ResolverChoice {
    .inProcess(InProcessResolver.shared, name: "embedded")
  }

  /// A given in-process resolver (tests and simulations make their own).
  public static func inProcess(_ resolver: InProcessResolver, name: String = "in-process")
    -> ResolverChoice
  {
    ResolverChoice(name: name) { resolver }
  }
}
