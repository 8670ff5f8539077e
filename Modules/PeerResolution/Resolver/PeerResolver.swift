@_spi(Resolver) public import Core
public import Foundation
public import Logging
import AsyncAlgorithms
@_spi(Resolver) public import Resolution
import Strategy
import Tokens

/// A resolver that needs no server: the resolution engine runs on this device, and what it
/// cannot resolve it asks of the token's owner over `PeerTransport`s (contract §3a).
///
/// A token heard that no local device holds is asked of its owner (directly when the sighting
/// came with a `returnPath`, else with a who-has to every device). The owner
/// answers with its publications that may reach the hearer; from the same question it learns
/// the hearer's publications and subscriptions and the mediums it was heard on. Each side
/// keeps the other as a *shadow device* in its own engine, so found, lost, expired, event
/// numbering and the set-top-box case come from the engine exactly as with the server.
/// While the token is heard the hearer asks again (refresh), which keeps the owner's side
/// fresh and carries unpublished publications away; when it stops, both engines lose after
/// `lostAfter`. Where the medium carries the owner's `HandlesDigest` (Core) beside its token
/// (the LAN's announcements), a refresh asks nothing while that digest equals the one of the
/// owner's answer and the owner said it hears the hearer itself on those mediums: a change of
/// digest asks at once, and an owner that stops hearing the hearer tells it so (an unasked
/// answer), after which the hearer asks again. Nothing changing then costs no datagram.
///
/// Datagrams are sealed under keys derived from the API key of the first device registered
/// (``PeerKeys``); one resolver serves one project. Every datagram is bounded, rate-limited
/// per sender and per host and authenticated before its body is read; what fails is dropped
/// and counted (``counters()``). Nothing larger than what an address sent goes to it until it
/// proved that it receives what is sent there: a sighting's way back gets a who-has-sized
/// probe, a query without the cookie of its source address gets an `iHave`-sized cookie, and
/// only a query with it gets the owner's publications (`AddressCookies`).
///
/// From the first registration until ``shutdown()`` the resolver runs one task: one loop
/// that takes its inputs one at a time (datagrams from each transport and the senders of
/// those partly arrived, the tick every
/// ``PeerResolverConfiguration/tickInterval`` on `clock`, the sender's results), beside the
/// sender that drains its outbox. Devices may come and go meanwhile (the last one leaving
/// does not stop it, so a resolver shared by several managers outlives any one of them).
/// ``shutdown()`` sends what is queued, closes the transports and awaits the task; released
/// without a shutdown, the task ends the same way. Decisions take their time from `now`;
/// tests pass a hand-moved time, a clock that never moves, call ``tick()`` themselves and
/// compare ``progress()`` with what their network delivered to know when nothing is left to
/// happen.
public actor PeerResolver {
  let configuration: PeerResolverConfiguration
  let engine: ResolutionEngine<InMemoryResolutionStore>
  let transports: [any PeerTransport]
  let logger: Logger
  let now: @Sendable () -> Date
  let clock: any Clock<Duration>

  /// The project's keys, set by the first registration.
  var sealer: PeerSealer?
  /// The project text the engine files every device under.
  static let project = "peer"
  /// Devices of this process, with the ephemeral id of their current token.
  var locals: [DeviceID: LocalDevice] = [:]
  var streams: [DeviceID: AsyncStream<SequencedEvent>.Continuation] = [:]
  /// How often each local device's mediums repeat its token, from who asked about it.
  var pacing: TransmitPaceStateMachine
  var paceStreams: [DeviceID: AsyncStream<TransmitPaceChange>.Continuation] = [:]
  /// Peer devices by their ephemeral id.
  var shadows: [Identifier: ShadowDevice] = [:]
  var shadowOfDevice: [DeviceID: Identifier] = [:]
  /// Per local device, the devices that asked it lately.
  var hearers: [DeviceID: [Identifier: RecentHearer]] = [:]
  var exchange: PeerExchangeStateMachine
  var replayGuard = ReplayGuard()
  var clockOffsets = PeerClockOffsets()
  var reassembler = Reassembler()
  var rateLimiter: SenderRateLimiter
  /// Datagrams per host (see ``PeerResolverConfiguration/ratePerHost``).
  var hostRateLimiter: SenderRateLimiter
  /// The cookies this device gives the addresses that ask it.
  let cookies = AddressCookies()
  /// The cookies owners gave this device, by the owner's address (at most
  /// ``maximumOwnerCookies``).
  var ownerCookies: [PeerAddress: UInt64] = [:]
  static let maximumOwnerCookies = 4096
  /// The exchange's `connectionAllowance` when a transport makes connections and the
  /// configuration leaves it unset: a GATT link took one to three seconds to open in the
  /// BlueZ VM under load.
  static let connectionAllowance = Duration.seconds(2)
  /// Who-has have a budget of their own (see ``PeerResolverConfiguration/whoHasRatePerSender``).
  var whoHasRateLimiter: SenderRateLimiter
  /// Bytes sent per destination (see ``PeerResolverConfiguration/bytesPerDestination``).
  var destinationBudget: SenderRateLimiter
  var statistics = PeerCounters()

  let outbox: AsyncStream<Outgoing>
  let outboxContinuation: AsyncStream<Outgoing>.Continuation
  /// What the loop reads, one at a time: received datagrams, ticks, send results. Sending
  /// into it waits until the loop takes the input, so a flood stays in the transports'
  /// bounded buffers.
  let inputs = AsyncChannel<Input>()
  var lifecycle = Lifecycle.idle
  /// Events yielded to each local device's current stream, for ``progress()``.
  var eventsStreamed: [DeviceID: Int] = [:]
  /// Datagrams queued for the sender, for ``progress()``.
  var queued = 0

  struct LocalDevice: Sendable {
    var credentials: DeviceCredentials
    var token: Token?
    var ephemeral = Identifier.random()
  }

  /// A datagram waiting to be sent: to one address, or to every device.
  struct Outgoing: Sendable {
    var bytes: [UInt8]
    var address: PeerAddress?
  }

  /// A resolver over `transports`, which it owns from now on (it shuts them down).
  /// - Parameters:
  ///   - transports: where to reach peers (with none, nothing is ever asked).
  ///   - configuration: the engine's rules and the exchange's.
  ///   - logger: where it logs (debug: each exchange; warning: what it cannot send).
  ///   - now: the time of every decision (the wall clock by default).
  ///   - clock: what the tick sleeps on.
  ///   - seed: the seed of query ids, for tests; nil (the default): the system generator.
  /// - Throws: `ResolutionConfigurationError` (Resolution) for a configuration out of range.
  public init(
    transports: [any PeerTransport], configuration: PeerResolverConfiguration = .init(),
    logger: Logger = Logger(label: "nearby.peer"), now: @escaping @Sendable () -> Date = { Date() },
    clock: any Clock<Duration> = ContinuousClock(), seed: UInt64? = nil
  ) throws(ResolutionConfigurationError) {
    try configuration.validate()
    var exchangeConfiguration = configuration.exchange
    exchangeConfiguration.canAskEveryone = transports.contains {
      $0.capabilities.contains(.multicast)
    }
    exchangeConfiguration.verifiedTransports = Set(
      transports.filter { $0.capabilities.contains(.connected) }.map(\.kind))
    if exchangeConfiguration.connectionAllowance == nil,
      !exchangeConfiguration.verifiedTransports.isEmpty
    {
      exchangeConfiguration.connectionAllowance = Self.connectionAllowance
    }
    self.configuration = configuration
    self.engine = ResolutionEngine(
      store: InMemoryResolutionStore(), configuration: configuration.resolution)
    self.transports = transports
    self.logger = logger
    self.now = now
    self.clock = clock
    self.exchange = PeerExchangeStateMachine(configuration: exchangeConfiguration, seed: seed)
    self.pacing = TransmitPaceStateMachine(
      configuration: .init(lostAfter: configuration.resolution.lostAfter))
    self.rateLimiter = SenderRateLimiter(
      perSecond: configuration.ratePerSender, burst: configuration.burstPerSender)
    self.hostRateLimiter = SenderRateLimiter(
      perSecond: configuration.ratePerHost, burst: configuration.burstPerHost)
    self.whoHasRateLimiter = SenderRateLimiter(
      perSecond: configuration.whoHasRatePerSender, burst: configuration.whoHasBurstPerSender)
    self.destinationBudget = SenderRateLimiter(
      perSecond: configuration.bytesPerDestination,
      burst: configuration.burstBytesPerDestination)
    (outbox, outboxContinuation) = AsyncStream.makeStream(
      of: Outgoing.self, bufferingPolicy: .bufferingNewest(configuration.outboxCapacity))
  }

  deinit {
    // The loop holds the resolver weakly; without a shutdown it ends here: the sender drains
    // the outbox and closes the transports, the readers and the tick timer stop.
    outboxContinuation.finish()
    inputs.finish()
  }

  /// What was received, dropped and sent so far.
  public func counters() -> PeerCounters { statistics }

  /// How much the local engine holds (local and shadow devices, handles, deliveries).
  public func counts() -> ResolutionCounts { engine.store.counts() }

  /// How many peer devices the engine holds.
  public var shadowCount: Int { shadows.count }

  /// How many questions (who-has or query) wait for their answer: 0 once every question
  /// asked was answered (or given up at a tick).
  public var waitingQuestions: Int { exchange.outstandingCount }

  // MARK: Resolver

  /// Registers a local device. The first registration fixes the project: its API key's
  /// derived keys seal every datagram.
  /// - Throws: ``Core/ResolverError/invalidAPIKey`` for an empty key or another project's,
  ///   ``Core/ResolverError/unavailable(_:)`` after ``shutdown()``.
  @_spi(Resolver) public func register(apiKey: String) async throws -> DeviceCredentials {
    if case .shutDown = lifecycle {
      throw ResolverError.unavailable("the peer resolver is shut down")
    }
    guard !apiKey.isEmpty else { throw ResolverError.invalidAPIKey }
    let keys = PeerKeys(apiKey: apiKey)
    if let sealer {
      guard sealer.keys.sameProject(as: keys) else {
        logger.error("a peer resolver serves one project; registration with another key refused")
        throw ResolverError.invalidAPIKey
      }
    } else {
      sealer = PeerSealer(keys: keys)
    }
    let credentials = try engine.register(project: Self.project, now: now())
    locals[credentials.id] = LocalDevice(credentials: credentials)
    startIfIdle()
    logger.debug("device registered", metadata: ["device": "\(credentials.id)"])
    return credentials
  }

  @_spi(Resolver) public func report(_ report: Report, from device: DeviceCredentials)
    async throws -> ReportAnswer
  {
    guard locals[device.id] != nil else { throw ResolverError.unknownDevice(device.id) }
    let time = now()
    var (answer, deviceEvents) = try engine.report(report, from: device, now: time)
    answer.directives.digest = digest(of: device.id, token: answer.directives.token, now: time)
    route(deviceEvents)
    let handlesChanged =
      !(report.publish.isEmpty && report.unpublish.isEmpty && report.subscribe.isEmpty
      && report.unsubscribe.isEmpty)
    var actions: [PeerExchangeStateMachine.Action] = []
    for sighting in report.sightings where !isLocal(sighting.token, at: time) {
      actions += exchange.heard(
        .init(local: device.id, token: sighting.token), on: sighting.medium,
        returnPath: reachable(sighting.returnPath), digest: sighting.digest, at: time)
    }
    if handlesChanged {
      let publicationsChanged = !(report.publish.isEmpty && report.unpublish.isEmpty)
      let subscriptionsChanged = !(report.subscribe.isEmpty && report.unsubscribe.isEmpty)
      // Owners that asked this device lately get its publications unasked (sendUpdates): when
      // only publications changed, asking them again would tell them nothing more (it
      // tripled the datagrams of a burst of publishes, docs/benchmarks.md).
      let informed: Set<Identifier> =
        publicationsChanged && !subscriptionsChanged
        ? Set((hearers[device.id] ?? [:]).filter { $0.value.until > time }.keys) : []
      actions += exchange.handlesChanged(local: device.id, now: time, informed: informed)
      if publicationsChanged { sendUpdates(from: device.id, now: time) }
    }
    perform(actions, now: time)
    return answer
  }

  @_spi(Resolver) public func events(for device: DeviceCredentials) async throws
    -> AsyncStream<SequencedEvent>
  {
    guard locals[device.id] != nil else { throw ResolverError.unknownDevice(device.id) }
    _ = try engine.authenticate(device)
    streams[device.id]?.finish()
    // Unbounded on purpose, as the in-process resolver's: found/lost must not be dropped.
    let (stream, continuation) = AsyncStream.makeStream(
      of: SequencedEvent.self, bufferingPolicy: .unbounded)
    streams[device.id] = continuation
    eventsStreamed[device.id] = 0
    return stream
  }

  @_spi(Resolver) public func unregister(_ device: DeviceCredentials) async throws {
    guard locals[device.id] != nil else { throw ResolverError.unknownDevice(device.id) }
    let time = now()
    let deviceEvents = try engine.unregister(device, now: time)
    // Devices that asked it lately learn at once that its publications are gone.
    sendUpdates(from: device.id, now: time)
    locals[device.id] = nil
    hearers[device.id] = nil
    exchange.removeLocal(device.id)
    streams.removeValue(forKey: device.id)?.finish()
    pacing.remove(device.id)
    paceStreams.removeValue(forKey: device.id)?.finish()
    eventsStreamed[device.id] = nil
    route(deviceEvents)
    logger.debug("device unregistered", metadata: ["device": "\(device.id)"])
  }

  // MARK: Time

  /// Handles what is due now: the engine's deadlines (lost, expiry), the exchange's retries,
  /// refreshes and forgetting, and shadows and hearers gone quiet. The loop calls it every
  /// ``PeerResolverConfiguration/tickInterval``.
  public func tick() {
    let time = now()
    do {
      route(try engine.sweep(now: time))
    } catch {
      logger.error("sweep failed", metadata: ["error": "\(error)"])
    }
    perform(exchange.tick(now: time), now: time)
    pace(pacing.tick(now: time))
    expireShadows(now: time)
    reassembler.expire(now: time)
    reviewHearers(now: time)
  }

  // MARK: Helpers

  /// The host of `address` (its transport's ``Core/PeerTransport/host(of:)``): what rate
  /// limits and byte budgets are keyed by.
  func host(of address: PeerAddress) -> PeerAddress {
    transports.first { $0.kind == address.transport }?.host(of: address) ?? address
  }

  /// Whether datagrams from `address` arrive over a transport whose addresses cannot be
  /// forged (no cookie needed).
  func isVerified(_ address: PeerAddress) -> Bool {
    exchange.configuration.verifiedTransports.contains(address.transport)
  }

  /// Keeps the cookie the owner at `address` gave this device (0: none given).
  func keepCookie(_ cookie: UInt64, from address: PeerAddress) {
    guard cookie != 0 else { return }
    if ownerCookies[address] == nil, ownerCookies.count >= Self.maximumOwnerCookies {
      ownerCookies.removeAll(keepingCapacity: true)
    }
    ownerCookies[address] = cookie
  }

  /// `path` when one of our transports reaches it, else nil: a token heard over BLE by a
  /// resolver without the GATT transport is asked with a who-has at once, not first at an
  /// address nothing here can send to.
  func reachable(_ path: PeerAddress?) -> PeerAddress? {
    guard let path, transports.contains(where: { $0.kind == path.transport }) else { return nil }
    return path
  }

  /// Whether `token` belongs to a device of this process at `time`.
  func isLocal(_ token: Token, at time: Date) -> Bool {
    localOwner(of: token, at: time) != nil
  }

  /// The local device that holds `token` at `time`.
  func localOwner(of token: Token, at time: Date) -> DeviceID? {
    guard let device = engine.store.devices.device(heard: token, at: time),
      locals[device] != nil
    else { return nil }
    return device
  }

  /// The ephemeral id of a local device's current token (new when the token changed), so
  /// nothing on the wire names the device across rotations.
  func ephemeralID(of local: DeviceID) -> Identifier? {
    guard var device = locals[local] else { return nil }
    // A device being removed keeps the id its last token had.
    if let token = engine.store.devices.device(local)?.token, device.token != token {
      device.token = token
      device.ephemeral = .random()
      locals[local] = device
    }
    return device.ephemeral
  }

  /// Sends events to their local devices' streams; events for shadows are dropped (their
  /// owners learn from their own engines).
  func route(_ deviceEvents: [DeviceEvent]) {
    for deviceEvent in deviceEvents where locals[deviceEvent.device] != nil {
      stream(deviceEvent.sequenced, to: deviceEvent.device)
    }
  }

  /// Yields `event` to the stream of the local device `local`, if it has one open.
  func stream(_ event: SequencedEvent, to local: DeviceID) {
    if case .enqueued = streams[local]?.yield(event) {
      eventsStreamed[local, default: 0] += 1
    }
  }
}

@_spi(Resolver) extension PeerResolver: Resolver {}
