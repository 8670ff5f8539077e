@_spi(Resolver) import Core
import Foundation
import Logging
@_spi(Resolver) import PeerResolution
@_spi(Resolver) import Resolution
@_spi(Resolver) import ServerStorage
import Synchronization
import Tokens

/// Joins the server's devices of one project to that project's peer network (see
/// ``PeerBridgeConfiguration``): performs what ``PeerBridgeMirrors`` decides, over a
/// ``PeerResolver`` whose local devices are the mirrors, and logs the found and lost the peer
/// resolver gives a mirror in its server device's event stream.
///
/// The handler tells it of reports and unregistrations without waiting (``observe(_:)``,
/// ``forget(_:)``); ``run()`` handles them one at a time, in order, with the tick, until it is
/// cancelled, then shuts the peer resolver down.
actor PeerBridge {
  /// What the loop handles.
  enum Input: Sendable {
    case observed(PeerBridgeMirrors.Observation)
    case forgotten(DeviceID)
    case tick
  }

  /// The project bridged (the key's).
  nonisolated let project: String
  private let apiKey: String
  private let resolver: PeerResolver
  private let storage: any ResolverStorage
  private let resolution: ResolutionConfiguration
  private let hub: EventHub
  private let logger: Logger
  private let now: @Sendable () -> Date
  private var mirrors: PeerBridgeMirrors
  private let inputs: AsyncStream<Input>
  private let inputContinuation: AsyncStream<Input>.Continuation
  /// Devices whose observation did not fit the queue, for the loop to rebuild.
  private let dropped = Mutex<Set<DeviceID>>([])
  /// Devices whose unregistration did not fit the queue, for the next tick.
  private let droppedForgets = Mutex<Set<DeviceID>>([])
  /// Events to log, in the order the bridge learnt them (a report's answer and the mirrors'
  /// streams alike), by one task: logged concurrently, a found and its lost could swap.
  private let logQueue: AsyncStream<(DeviceID, [ResolverEvent])>
  private let logContinuation: AsyncStream<(DeviceID, [ResolverEvent])>.Continuation
  /// Mirrors' event streams to follow, with the server device each stands for.
  private let pumps: AsyncStream<(DeviceID, AsyncStream<SequencedEvent>)>
  private let pumpContinuation: AsyncStream<(DeviceID, AsyncStream<SequencedEvent>)>.Continuation

  /// How many observations may wait: a report of the project's devices waits for none of
  /// the bridge's work; past this the device's mirror is rebuilt from the storage instead.
  static let queueCapacity = 4096
  /// How often idle mirrors and expired aliases are looked for.
  static let tickInterval: Duration = .seconds(1)

  /// - Throws: ``PeerBridgeError`` when the key is not a client key of this server; the
  ///   database's error; `ResolutionConfigurationError` for a peer configuration out of range.
  static func make(
    configuration: PeerBridgeConfiguration, storage: any ResolverStorage,
    resolution: ResolutionConfiguration, hub: EventHub, logger: Logger,
    now: @escaping @Sendable () -> Date
  ) async throws -> PeerBridge {
    let key = configuration.apiKey
    guard let record = try await storage.read({ try $0.apiKeys.apiKey(key) }), !record.isRevoked
    else {
      throw PeerBridgeError.unknownKey
    }
    guard record.role == .client else { throw PeerBridgeError.adminKey(project: record.project) }
    let resolver = try PeerResolver(
      transports: configuration.transports, configuration: configuration.peer, logger: logger,
      now: now)
    return PeerBridge(
      project: record.project, apiKey: key, resolver: resolver, storage: storage,
      resolution: resolution, idleLimit: configuration.idleLimit, hub: hub, logger: logger,
      now: now)
  }

  init(
    project: String, apiKey: String, resolver: PeerResolver, storage: any ResolverStorage,
    resolution: ResolutionConfiguration, idleLimit: Duration, hub: EventHub, logger: Logger,
    now: @escaping @Sendable () -> Date
  ) {
    self.project = project
    self.apiKey = apiKey
    self.resolver = resolver
    self.storage = storage
    self.resolution = resolution
    self.hub = hub
    self.logger = logger
    self.now = now
    self.mirrors = PeerBridgeMirrors(idleLimit: idleLimit)
    (inputs, inputContinuation) = AsyncStream.makeStream(
      of: Input.self, bufferingPolicy: .bufferingOldest(Self.queueCapacity))
    (pumps, pumpContinuation) = AsyncStream.makeStream(
      of: (DeviceID, AsyncStream<SequencedEvent>).self, bufferingPolicy: .unbounded)
    // Unbounded as the peer resolver's event streams it follows: found and lost are not
    // dropped.
    (logQueue, logContinuation) = AsyncStream.makeStream(
      of: (DeviceID, [ResolverEvent]).self, bufferingPolicy: .unbounded)
  }

  /// Tells the bridge of a report its storage applied: `token` is the device's token from the
  /// report's answer, valid for `tokenExpiresIn` seconds.
  nonisolated func observe(
    device: DeviceID, report: Report, token: Token, tokenExpiresIn: Double, at time: Date
  ) {
    let until = time.addingTimeInterval(
      max(tokenExpiresIn, 0) + resolution.tokenGrace.seconds)
    let observation = PeerBridgeMirrors.Observation(
      device: device, report: report, token: token, tokenResolvesUntil: until)
    if case .dropped = inputContinuation.yield(.observed(observation)) {
      dropped.withLock { _ = $0.insert(device) }
    }
  }

  /// Tells the bridge a device unregistered.
  nonisolated func forget(_ device: DeviceID) {
    if case .dropped = inputContinuation.yield(.forgotten(device)) {
      droppedForgets.withLock { _ = $0.insert(device) }
    }
  }

  /// What the peer resolver counted (datagrams received, dropped, sent).
  func counters() async -> PeerCounters { await resolver.counters() }

  /// How many server devices stand among the peers.
  var mirrorCount: Int { mirrors.mirrors.count }

  /// Handles reports, unregistrations and ticks until cancelled; then shuts the peer resolver
  /// down (its transports with it) and returns once every mirror's event stream has ended.
  func run() async {
    let (inputs, pumps, continuation, logQueue) = (
      self.inputs, self.pumps, inputContinuation, self.logQueue
    )
    await withDiscardingTaskGroup { group in
      group.addTask {
        while !Task.isCancelled {
          do { try await Task.sleep(for: Self.tickInterval) } catch { return }
          continuation.yield(.tick)
        }
      }
      group.addTask {
        for await (device, events) in logQueue {
          await self.write(events, for: device)
        }
      }
      group.addTask {
        await withDiscardingTaskGroup { pumping in
          for await (device, events) in pumps {
            pumping.addTask { await self.follow(events, for: device) }
          }
        }
      }
      for await input in inputs {
        await handle(input)
      }
      // Cancelled: the tick, the logging and the streams' followers end with the group (what
      // they still held goes: the server is stopping), then the resolver shuts down.
      group.cancelAll()
      await resolver.shutdown()
    }
  }

  private func handle(_ input: Input) async {
    let time = now()
    switch input {
    case .observed(let observation):
      if dropped.withLock({ $0.remove(observation.device) }) != nil {
        mirrors.markStale(observation.device)
      }
      let refused = mirrors.refusedSightings
      await perform(mirrors.observe(observation, now: time), now: time)
      if mirrors.refusedSightings > refused {
        logger.debug(
          "sightings not passed to the peers: the device reported more distinct tokens than a mirror passes on",
          metadata: [
            "device": "\(observation.device)",
            "limit":
              "\(PeerBridgeMirrors.tokensPerMirror) in \(Int(PeerBridgeMirrors.tokenMemory)) s",
            "refused": "\(mirrors.refusedSightings - refused)",
          ])
      }
    case .forgotten(let device):
      if let mirror = mirrors.forget(device) { await remove(mirror) }
    case .tick:
      let forgotten = droppedForgets.withLock { set in
        defer { set.removeAll() }
        return set
      }
      for device in forgotten {
        if let mirror = mirrors.forget(device) { await remove(mirror) }
      }
      let (idle, expired) = mirrors.tick(now: time)
      for mirror in idle { await remove(mirror) }
      for token in expired { await resolver.unbindAlias(token) }
    }
  }

  private func perform(_ step: PeerBridgeMirrors.Step, now time: Date) async {
    switch step {
    case .create(let device, let alias, let until, let sightings, let replacing):
      if let replacing { await remove(replacing) }
      do {
        guard let handles = try await storage.handles(of: device, now: time) else { return }
        let credentials = try await resolver.register(apiKey: apiKey)
        mirrors.created(
          device, credentials: credentials, alias: alias, until: until, sightings: sightings,
          publications: handles.publish.map(\.id), subscriptions: handles.subscribe.map(\.id),
          now: time)
        try await resolver.bindAlias(alias, to: credentials, until: until)
        // The stream is opened before anything is reported: what the peers answer may arrive
        // before a task could open it.
        pumpContinuation.yield((device, try await resolver.events(for: credentials)))
        let report = Report(
          publish: handles.publish, subscribe: handles.subscribe, sightings: sightings)
        for part in report.parts { try await forward(part, from: credentials, for: device) }
        logger.debug(
          "server device joined the peers",
          metadata: [
            "device": "\(device)", "publications": "\(handles.publish.count)",
            "subscriptions": "\(handles.subscribe.count)",
          ])
      } catch {
        logger.warning(
          "a server device could not join the peers",
          metadata: ["device": "\(device)", "error": "\(error)"])
      }
    case .forward(let device, let credentials, let report, let alias, let until):
      do {
        if let alias { try await resolver.bindAlias(alias, to: credentials, until: until) }
        try await forward(report, from: credentials, for: device)
      } catch {
        // Its mirror may now differ from the device: made again at the next report.
        mirrors.markStale(device)
        logger.warning(
          "a server device's report could not reach the peers",
          metadata: ["device": "\(device)", "error": "\(error)"])
      }
    case .refused:
      logger.debug(
        "a server device is not passed to the peers: the bridge holds its most mirrors",
        metadata: ["limit": "\(PeerBridgeMirrors.maximumMirrors)"])
    }
  }

  /// Reports for the mirror and logs the events the answer carries for its device.
  private func forward(_ report: Report, from mirror: DeviceCredentials, for device: DeviceID)
    async throws
  {
    let answer = try await resolver.report(report, from: mirror)
    log(answer.events.map(\.event), for: device)
  }

  /// Follows a mirror's event stream until the mirror is removed.
  private func follow(_ events: AsyncStream<SequencedEvent>, for device: DeviceID) async {
    for await event in events {
      log([event.event], for: device)
    }
  }

  /// Queues a mirror's found and lost for its device's stream. Its handles' expiry is not
  /// passed on: the server's engine expires the same handles and says so itself.
  private func log(_ events: [ResolverEvent], for device: DeviceID) {
    let deliveries = events.filter { event in
      switch event {
      case .found, .lost: true
      case .publicationExpired, .subscriptionExpired: false
      }
    }
    if !deliveries.isEmpty { logContinuation.yield((device, deliveries)) }
  }

  /// Logs events in the device's stream and wakes its readers.
  private nonisolated func write(_ events: [ResolverEvent], for device: DeviceID) async {
    let deliveries = events.map { DeviceEvent(device: device, event: $0) }
    do {
      let logged = try await storage.logEvents(deliveries, configuration: resolution, now: now())
      if !logged.isEmpty { hub.wake([device]) }
    } catch {
      logger.error(
        "events from the peers could not be logged",
        metadata: ["device": "\(device)", "error": "\(error)"])
    }
  }

  private func remove(_ mirror: PeerBridgeMirrors.Mirror) async {
    for token in mirror.aliases.keys { await resolver.unbindAlias(token) }
    do { try await resolver.unregister(mirror.credentials) } catch {
      logger.debug("a mirror was already gone", metadata: ["error": "\(error)"])
    }
  }
}
