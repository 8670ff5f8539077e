public import Foundation
import Hummingbird
import HummingbirdCore
import HummingbirdTLS
public import Logging
import NIOCore
import OpenAPIHummingbird
import ResolverAPI
@_spi(Resolver) import ResolverWire
public import ServerStorage
public import ServiceLifecycle

/// The resolver server (contract §7): the HTTP API of openapi.yaml over a `ResolverStorage`,
/// with a sweeper for time-driven events. It holds no state but caches, so several instances
/// can serve one PostgreSQL database behind a load balancer.
///
/// Run it as a swift-service-lifecycle `Service` (graceful shutdown stops accepting
/// requests, lets open ones finish and stops the sweeper), or call ``run(onListening:)``.
public struct ResolverServer: Service {
  public let storage: any ResolverStorage
  public let configuration: ResolverServerConfiguration
  /// The peer network this server joins, if any.
  let peerBridge: PeerBridgeConfiguration?
  let logger: Logger
  let now: @Sendable () -> Date

  /// - Parameters:
  ///   - storage: where everything is kept (ServerStorage's SQLite or PostgreSQL storage).
  ///   - configuration: address, limits, timeouts and the console.
  ///   - peerBridge: the peer network of one project to join (see
  ///     ``PeerBridgeConfiguration``); nil (the default): none.
  ///   - logger: where the server, its requests and its sweeper log.
  ///   - now: the clock (tests may pass their own).
  public init(
    storage: any ResolverStorage, configuration: ResolverServerConfiguration = .init(),
    peerBridge: PeerBridgeConfiguration? = nil, logger: Logger = Logger(label: "nearby.server"),
    now: @escaping @Sendable () -> Date = { Date() }
  ) {
    self.storage = storage
    self.configuration = configuration
    self.peerBridge = peerBridge
    self.logger = logger
    self.now = now
  }

  public func run() async throws { try await run(onListening: { _ in }) }

  /// Serves until a graceful shutdown is triggered (open requests finish), or until the task is
  /// cancelled (at once). Stop a server that takes connections gracefully: SwiftNIO traps when
  /// serving is cancelled while an accepted connection waits to be handed over
  /// (apple/swift-nio#3481).
  /// - Parameter onListening: called with the bound port once the server accepts connections.
  /// - Throws: if the address cannot be bound (the message names it); ``PeerBridgeError`` when
  ///   the peer bridge's key is not a client key of this server.
  public func run(onListening: @escaping @Sendable (Int) async -> Void) async throws {
    let metrics = ServerMetrics()
    let hub = EventHub()
    var bridge: PeerBridge?
    if let peerBridge {
      bridge = try await PeerBridge.make(
        configuration: peerBridge, storage: storage, resolution: configuration.resolution,
        hub: hub, logger: logger, now: now)
    }
    let health = HealthState(tolerance: .seconds(10))
    let quotas = QuotaState()
    let limits = RequestLimits(configuration: configuration)
    let handler = ResolverHandler(
      storage: storage, configuration: configuration, hub: hub, metrics: metrics, health: health,
      eidIndexes: EIDIndexCache(), quotas: quotas, observations: ObservationThrottle(),
      limits: limits,
      streams: EventStreamCounts(
        maximumPerKey: configuration.maximumEventStreamsPerKey,
        maximumPerAddress: configuration.maximumEventStreamsPerAddress),
      activity: ProjectActivity(), bridge: bridge, logger: logger, now: now)
    let sweeper = Sweeper(
      storage: storage, configuration: configuration, hub: hub, metrics: metrics, health: health,
      limits: limits, quotas: quotas, instance: UUID().uuidString, logger: logger, now: now)
    await sweeper.sweepOnce()
    await sweeper.heartbeat()
    do { try await sweeper.checkQuotas() } catch {
      logger.warning("quota check failed", metadata: ["error": "\(error)"])
    }

    let router = Router(context: AddressedRequestContext.self)
    router.add(middleware: ClientAddressMiddleware(trustedProxies: configuration.trustedProxies))
    // The key is checked before the body is read: a client without a key cannot make the
    // server buffer a body.
    let keys = APIKeyMiddleware(
      keys: APIKeyCache(storage: storage, lifetime: configuration.apiKeyCacheLifetime),
      limits: limits,
      metricsNeedKey: configuration.metricsRequireKey)
    try handler.registerHandlers(
      on: router, configuration: .nearby,
      middlewares: [
        ErrorAnswerMiddleware(logger: logger),
        RequestMetricsMiddleware(metrics: metrics),
        keys,
        BodyLimitMiddleware(limit: configuration.maximumBodyBytes),
      ])
    // The phone's page under /web, on the API's origin (no CORS), with its own headers.
    try WebRoutes(keys: keys, limits: limits).register(on: router)
    // The web console's plain routes under /console, beside the API's: none of the API's
    // middlewares apply to them, nor theirs to the API.
    if configuration.console.isEnabled {
      try Console(handler: handler, limits: limits, logger: logger).register(on: router)
    }
    let logger = self.logger
    let storageDescription = storage.description
    let idle = Self.timeAmount(configuration.idleTimeout)
    let head = Self.timeAmount(configuration.requestHeadTimeout)
    let body = Self.timeAmount(configuration.requestBodyTimeout)
    let unauthenticatedBody = Self.timeAmount(configuration.unauthenticatedBodyTimeout)
    let connections = ConnectionCounts(
      maximumPerAddress: configuration.maximumConnectionsPerAddress,
      exempt: configuration.trustedProxies)
    let http1 = HTTPServerBuilder.http1(
      configuration: .init(
        additionalChannelHandlers: [
          ConnectionsPerAddressHandler(counts: connections),
          RequestDeadlineHandler(
            headTimeout: head, bodyTimeout: body, unauthenticatedBodyTimeout: unauthenticatedBody),
        ],
        idleTimeout: idle,
        httpDecoderConfiguration: .init(
          maxHeaderFieldSize: 16 * 1024, maxHeaderListSize: 64 * 1024, maxHeaderFieldCount: 100))
    )
    let app = Application(
      router: router,
      server: try configuration.tls.map {
        try .tls(http1, tlsConfiguration: $0.tlsConfiguration())
      } ?? http1,
      configuration: .init(
        address: .hostname(configuration.host, port: configuration.port),
        availableConnectionsDelegate: .maximum(configuration.maximumConnections, logger: logger)),
      onServerRunning: { channel in
        let port = channel.localAddress?.port ?? 0
        logger.info(
          "resolver listening",
          metadata: [
            "address": "\(channel.localAddress.map { "\($0)" } ?? "?")",
            "storage": "\(storageDescription)",
          ])
        await onListening(port)
      },
      logger: logger)
    let notifications = storage.eventNotifications()
    try await withThrowingTaskGroup(of: Void.self) { group in
      if let notifications {
        // Other instances' events (PostgreSQL LISTEN/NOTIFY) wake exactly their streams here.
        group.addTask {
          for await notification in notifications {
            switch notification {
            case .devices(let devices): hub.wake(devices)
            case .resynchronize: hub.wakeAll()
            }
          }
          // Ended by cancellation only; wait for the others rather than end the server.
          while !Task.isCancelled { try? await Task.sleep(for: .seconds(3600)) }
        }
      }
      group.addTask { await sweeper.run() }
      group.addTask {
        // Fine enough that a stream is woken close to its poll time; ends on cancellation,
        // as the notifications above.
        await hub.run(resolution: Self.pollResolution(for: configuration))
      }
      if let bridge {
        group.addTask {
          await bridge.run()
          // Ended by cancellation only, as the notifications above.
          while !Task.isCancelled { try? await Task.sleep(for: .seconds(3600)) }
        }
        logger.info("joined the peer network", metadata: ["project": "\(bridge.project)"])
      }
      // No signals of its own: SIGTERM reaches the server through the service group that runs
      // it (its graceful shutdown), so that this returns only once that group asked it to. An
      // application listening itself ended first on SIGTERM, and the group then reported
      // "a service has finished unexpectedly" (seen with PostgreSQL: exit status 1 on every
      // stop).
      group.addTask { try await app.runService(gracefulShutdownSignals: []) }
      // Whichever ends first (the app on shutdown, or an error) ends the other.
      try await group.next()
      group.cancelAll()
    }
  }

  /// How often the hub looks for polls due: an eighth of the shortest poll interval (the
  /// event streams' and the live views'), at most a quarter second.
  static func pollResolution(for configuration: ResolverServerConfiguration) -> Duration {
    let shortest = min(
      configuration.eventPollInterval, configuration.heartbeat, Console.livePollInterval)
    return min(shortest / 8, .milliseconds(250))
  }

  static func timeAmount(_ duration: Duration) -> TimeAmount {
    let parts = duration.components
    return .nanoseconds(parts.seconds * 1_000_000_000 + parts.attoseconds / 1_000_000_000)
  }
}
