import Foundation
import Logging
import Strategy
public import Tokens

/// Publishes messages and subscribes to the messages of nearby devices (the seed's message
/// manager).
///
/// A manager registers its device with the resolver once, drives its mediums as the
/// resolver directs (which token to transmit, where to scan), batches what they hear into
/// reports, and delivers found/lost/expired events to subscription handlers (called on this
/// actor) and streams.
///
/// ```swift
/// let manager = try await MessageManager(apiKey: key, configuration: .init(
///   resolver: .embedded, mediums: [.bluez(), .pulseAudio()]))
/// let publication = try await manager.publish(Message(text: "Alice", type: "name"))
/// let subscription = try await manager.subscribe(onFound: { print("found", $0) })
/// ```
public actor MessageManager {
  /// This manager's device, as registered with the resolver.
  public nonisolated let deviceID: DeviceID
  /// Medium problems as they start and clear (the three error handlers see the same).
  /// Keeps the newest 64 when not read.
  public nonisolated let errors: AsyncStream<MediumError>

  private struct MediumSlot {
    let medium: any Medium
    var transmitting: Token?
    var scanning = false
    var problem: MediumError.Kind?
  }

  private struct PublicationRecord {
    let spec: PublicationSpec
    let cell: StatusCell
    let expiredHandler: (@Sendable () -> Void)?
  }

  private struct SubscriptionRecord {
    let spec: SubscriptionSpec
    let cell: StatusCell
    let continuation: AsyncStream<SubscriptionEvent>.Continuation
    let onFound: (@Sendable (Message) -> Void)?
    let onLost: (@Sendable (Message) -> Void)?
    let expiredHandler: (@Sendable () -> Void)?
  }

  private let errorsContinuation: AsyncStream<MediumError>.Continuation
  private let credentials: DeviceCredentials
  private let resolver: any Resolver
  private let configuration: Configuration
  private let logger: Logger
  private var slots: [MediumSlot]
  private var publications: [PublicationID: PublicationRecord] = [:]
  private var subscriptions: [SubscriptionID: SubscriptionRecord] = [:]
  private let inbox = SightingInbox()
  private var directives: Directives?
  private var isReconciling = false
  private var tasks: [Task<Void, Never>] = []
  private var refreshTask: Task<Void, Never>?
  private var isShutDown = false

  /// The most sightings sent in one report.
  private static let maximumSightingsPerReport = 4096

  /// Registers a device with the configured resolver and starts the configured mediums.
  ///
  /// - Throws: ``ManagerError/emptyAPIKey``; the resolver's errors (``ResolverError``); the
  ///   error of a medium factory that fails.
  public init(apiKey: String, configuration: Configuration) async throws {
    guard !apiKey.isEmpty else { throw ManagerError.emptyAPIKey }
    var logger = configuration.logger
    if MessageManager.isDebugLoggingEnabled { logger.logLevel = .debug }
    let resolver = try await configuration.resolver.make()
    let credentials = try await resolver.register(apiKey: apiKey)
    logger[metadataKey: "nearby.device"] = "\(credentials.id)"
    var mediums: [any Medium] = []
    let events: AsyncStream<ResolverEvent>
    do {
      for provider in configuration.mediums {
        let context = MediumContext(deviceID: credentials.id, logger: logger)
        mediums.append(try await provider.make(context))
      }
      events = try await resolver.events(for: credentials)
    } catch {
      for medium in mediums { await medium.shutdown() }
      try? await resolver.unregister(credentials)
      throw error
    }

    self.deviceID = credentials.id
    (self.errors, self.errorsContinuation) = AsyncStream.makeStream(
      of: MediumError.self, bufferingPolicy: .bufferingNewest(64))
    self.credentials = credentials
    self.resolver = resolver
    self.configuration = configuration
    self.logger = logger
    self.slots = mediums.map { MediumSlot(medium: $0) }

    for (index, medium) in mediums.enumerated() {
      let sightings = medium.sightings
      let statuses = medium.statusUpdates
      let inbox = inbox
      tasks.append(
        Task { [weak self] in
          for await sighting in sightings where inbox.append(sighting) {
            guard let self else { return }
            Task { await self.flushSightings() }
          }
        })
      tasks.append(
        Task { [weak self] in
          for await status in statuses {
            guard let self else { return }
            await self.mediumStatusChanged(index, status)
          }
        })
    }
    tasks.append(
      Task { [weak self] in
        for await event in events {
          guard let self else { return }
          await self.deliver([event])
        }
      })
    logger.debug(
      "message manager started",
      metadata: [
        "resolver": "\(configuration.resolver.name)",
        "mediums": "\(mediums.map(\.name).joined(separator: ","))",
      ])
  }

  deinit {
    for task in tasks { task.cancel() }
    refreshTask?.cancel()
    errorsContinuation.finish()
    guard !isShutDown else { return }
    let resolver = resolver
    let credentials = credentials
    let mediums = slots.map(\.medium)
    Task {
      for medium in mediums { await medium.shutdown() }
      try? await resolver.unregister(credentials)
    }
  }

  // MARK: Publishing

  /// Publishes `message` until the returned publication is cancelled, released, or expires.
  ///
  /// - Parameter configure: sets the ``PublicationParams`` (strategy, expired handler).
  /// - Throws: ``MessageError`` or ``StrategyError`` naming the limit or rule broken,
  ///   ``ManagerError/shutDown``, or the resolver's error.
  /// `configure` runs on the caller's executor before anything is sent.
  public nonisolated(nonsending) func publish(
    _ message: Message, configure: (inout PublicationParams) throws -> Void = { _ in }
  ) async throws -> Publication {
    var params = PublicationParams()
    try configure(&params)
    return try await publish(message, params: params)
  }

  /// Publishes `message` with `params`; see ``publish(_:configure:)``.
  public func publish(_ message: Message, params: PublicationParams) async throws -> Publication {
    guard !isShutDown else { throw ManagerError.shutDown }
    try message.validate()
    try params.strategy.validate()
    let spec = PublicationSpec(id: .random(), message: message, strategy: params.strategy)
    let cell = StatusCell()
    publications[spec.id] = PublicationRecord(
      spec: spec, cell: cell, expiredHandler: params.expiredHandler)
    let handle = Publication(
      id: spec.id, message: message, strategy: params.strategy, manager: self, cell: cell)
    do {
      try await send(Report(publish: [spec]))
    } catch {
      publications[spec.id] = nil
      cell.set(.inactive)
      throw error
    }
    if publications[spec.id] == nil {
      // Cancelled while the resolver was being told: make sure it is gone there too.
      try? await send(Report(unpublish: [spec.id]))
    } else {
      cell.set(.active)
    }
    logger.debug("published", metadata: ["publication": "\(spec.id)", "message": "\(message)"])
    return handle
  }

  func unpublish(_ id: PublicationID) async {
    guard let record = publications.removeValue(forKey: id) else { return }
    record.cell.set(.inactive)
    do {
      try await send(Report(unpublish: [id]))
      logger.debug("unpublished", metadata: ["publication": "\(id)"])
    } catch {
      logger.warning("unpublish failed", metadata: ["publication": "\(id)", "error": "\(error)"])
    }
  }

  // MARK: Subscribing

  /// Subscribes to nearby messages until the returned subscription is cancelled, released, or
  /// expires. `onFound` and `onLost` run on this actor, in event order; return quickly.
  ///
  /// - Parameter configure: sets the ``SubscriptionParams`` (strategy, namespace, type, ...).
  /// - Throws: ``MessageError`` for a bad namespace or type filter, ``StrategyError``,
  ///   ``ManagerError``, or the resolver's error.
  /// `configure` runs on the caller's executor before anything is sent. With `onFound` alone,
  /// label the closure: `subscribe(onFound: { ... }, configure: { ... })`.
  public nonisolated(nonsending) func subscribe(
    onFound: (@Sendable (Message) -> Void)? = nil,
    onLost: (@Sendable (Message) -> Void)? = nil,
    configure: (inout SubscriptionParams) throws -> Void = { _ in }
  ) async throws -> Subscription {
    var params = SubscriptionParams()
    try configure(&params)
    return try await subscribe(params: params, onFound: onFound, onLost: onLost)
  }

  /// Subscribes with `params`; see ``subscribe(onFound:onLost:configure:)``.
  public func subscribe(
    params: SubscriptionParams,
    onFound: (@Sendable (Message) -> Void)? = nil,
    onLost: (@Sendable (Message) -> Void)? = nil
  ) async throws -> Subscription {
    guard !isShutDown else { throw ManagerError.shutDown }
    try params.strategy.validate()
    try Message.validate(namespace: params.namespace)
    if let type = params.type { try Message.validate(type: type) }
    if params.deviceTypes.contains(.bleBeacons) {
      throw ManagerError.unsupported(
        "beacon subscriptions (deviceTypes .bleBeacons) arrive with Eddystone/iBeacon support")
    }
    guard params.deviceTypes.contains(.nearbyDevices) else { throw ManagerError.noDeviceTypes }
    guard params.eventBufferSize > 0 else {
      throw ManagerError.invalidEventBufferSize(params.eventBufferSize)
    }
    let spec = SubscriptionSpec(
      id: .random(), namespace: params.namespace, type: params.type, strategy: params.strategy,
      deviceTypes: params.deviceTypes)
    let (stream, continuation) = AsyncStream.makeStream(
      of: SubscriptionEvent.self, bufferingPolicy: .bufferingNewest(params.eventBufferSize))
    let cell = StatusCell()
    subscriptions[spec.id] = SubscriptionRecord(
      spec: spec, cell: cell, continuation: continuation, onFound: onFound, onLost: onLost,
      expiredHandler: params.expiredHandler)
    let handle = Subscription(id: spec.id, events: stream, manager: self, cell: cell)
    do {
      try await send(Report(subscribe: [spec]))
    } catch {
      subscriptions[spec.id] = nil
      continuation.finish()
      cell.set(.inactive)
      throw error
    }
    if subscriptions[spec.id] == nil {
      try? await send(Report(unsubscribe: [spec.id]))
    } else {
      cell.set(.active)
    }
    logger.debug(
      "subscribed",
      metadata: [
        "subscription": "\(spec.id)", "namespace": "\(spec.namespace)",
        "type": "\(spec.type ?? "*")",
      ])
    return handle
  }

  func unsubscribe(_ id: SubscriptionID) async {
    guard let record = subscriptions.removeValue(forKey: id) else { return }
    record.continuation.finish()
    record.cell.set(.inactive)
    do {
      try await send(Report(unsubscribe: [id]))
      logger.debug("unsubscribed", metadata: ["subscription": "\(id)"])
    } catch {
      logger.warning(
        "unsubscribe failed", metadata: ["subscription": "\(id)", "error": "\(error)"])
    }
  }

  // MARK: Lifecycle

  /// The publications this manager has running.
  public var publicationCount: Int { publications.count }
  /// The subscriptions this manager has running.
  public var subscriptionCount: Int { subscriptions.count }
  /// The token this device transmits now, once the resolver has issued one.
  public var currentToken: Token? { directives?.token }

  /// Stops every publication and subscription, shuts the mediums down and unregisters the
  /// device. Later calls to publish or subscribe throw ``ManagerError/shutDown``.
  public func shutdown() async {
    guard !isShutDown else { return }
    isShutDown = true
    for record in publications.values { record.cell.set(.inactive) }
    for record in subscriptions.values {
      record.continuation.finish()
      record.cell.set(.inactive)
    }
    publications.removeAll()
    subscriptions.removeAll()
    for task in tasks { task.cancel() }
    refreshTask?.cancel()
    for slot in slots { await slot.medium.shutdown() }
    do {
      try await resolver.unregister(credentials)
    } catch {
      logger.warning("unregister failed", metadata: ["error": "\(error)"])
    }
    errorsContinuation.finish()
    logger.debug("message manager shut down")
  }

  // MARK: Reports and directives

  private func send(_ report: Report) async throws {
    let answer = try await resolver.report(report, from: credentials)
    await apply(answer, rescheduleRefresh: false)
  }

  private func apply(_ answer: ReportAnswer, rescheduleRefresh: Bool) async {
    deliver(answer.events)
    let tokenChanged = directives?.token != answer.directives.token
    directives = answer.directives
    if tokenChanged || rescheduleRefresh || refreshTask == nil {
      scheduleRefresh(after: answer.directives.tokenExpiresIn)
    }
    await reconcileMediums()
  }

  /// Asks the resolver for directives again when the token is due to rotate.
  private func scheduleRefresh(after seconds: Double) {
    refreshTask?.cancel()
    refreshTask = Task { [weak self] in
      try? await Task.sleep(for: .seconds(max(seconds, 0) + 0.01))
      guard !Task.isCancelled, let self else { return }
      await self.refreshDirectives()
    }
  }

  private func refreshDirectives() async {
    guard !isShutDown else { return }
    do {
      let answer = try await resolver.report(Report(), from: credentials)
      await apply(answer, rescheduleRefresh: true)
    } catch {
      logger.warning("refreshing directives failed; retrying", metadata: ["error": "\(error)"])
      scheduleRefresh(after: 1)
    }
  }

  /// Brings every medium in line with the current directives. One pass runs at a time; a pass
  /// repeats until nothing changed, so directives that arrive meanwhile are applied too.
  private func reconcileMediums() async {
    guard !isReconciling else { return }
    isReconciling = true
    defer { isReconciling = false }
    var changed = true
    while changed, !isShutDown, let directives {
      changed = false
      for index in slots.indices {
        let medium = slots[index].medium
        let wantToken =
          directives.broadcast.contains(medium.kind) && medium.capabilities.contains(.broadcast)
          ? directives.token : nil
        if slots[index].transmitting != wantToken {
          slots[index].transmitting = wantToken
          changed = true
          if let wantToken {
            do {
              try await medium.transmit(wantToken)
            } catch {
              logger.warning(
                "medium cannot transmit",
                metadata: ["medium": "\(medium.name)", "error": "\(error)"])
            }
          } else {
            await medium.stopTransmitting()
          }
        }
        let wantScan = directives.scan.contains(medium.kind) && medium.capabilities.contains(.scan)
        if slots[index].scanning != wantScan {
          slots[index].scanning = wantScan
          changed = true
          if wantScan {
            do {
              try await medium.startScanning()
            } catch {
              logger.warning(
                "medium cannot scan", metadata: ["medium": "\(medium.name)", "error": "\(error)"])
            }
          } else {
            await medium.stopScanning()
          }
        }
      }
    }
  }

  // MARK: Sightings

  /// Sends what the mediums heard, in batches, until the inbox is empty; sightings that arrive
  /// during a report go in the next one. Our own token is dropped.
  private func flushSightings() async {
    while true {
      let batch = inbox.take(upTo: Self.maximumSightingsPerReport)
      if batch.isEmpty { return }
      let token = directives?.token
      let heard = batch.filter { $0.token != token }
      guard !isShutDown, !heard.isEmpty else { continue }
      do {
        try await send(Report(sightings: heard))
      } catch {
        logger.warning(
          "report of sightings failed; dropped",
          metadata: ["sightings": "\(heard.count)", "error": "\(error)"])
      }
    }
  }

  // MARK: Events

  private func deliver(_ events: [ResolverEvent]) {
    for event in events {
      switch event {
      case .found(let id, let message):
        guard let record = subscriptions[id] else { continue }
        record.onFound?(message)
        record.continuation.yield(.found(message))
      case .lost(let id, let message):
        guard let record = subscriptions[id] else { continue }
        record.onLost?(message)
        record.continuation.yield(.lost(message))
      case .subscriptionExpired(let id):
        guard let record = subscriptions.removeValue(forKey: id) else { continue }
        logger.debug("subscription expired", metadata: ["subscription": "\(id)"])
        record.expiredHandler?()
        record.continuation.yield(.expired)
        record.continuation.finish()
        record.cell.set(.inactive)
      case .publicationExpired(let id):
        guard let record = publications.removeValue(forKey: id) else { continue }
        logger.debug("publication expired", metadata: ["publication": "\(id)"])
        record.expiredHandler?()
        record.cell.set(.inactive)
      }
    }
  }

  // MARK: Medium status

  private func mediumStatusChanged(_ index: Int, _ status: MediumStatus) {
    let medium = slots[index].medium
    let kind = MediumError.kind(for: status, on: medium.kind)
    let previous = slots[index].problem
    guard kind != previous else { return }
    slots[index].problem = kind
    if let previous {
      report(MediumError(kind: previous, medium: medium.kind, isActive: false, message: "cleared"))
    }
    if let kind {
      let message: String
      switch status {
      case .ready: message = ""
      case .poweredOff: message = "\(medium.name) is powered off or missing"
      case .permissionDenied(let text), .unavailable(let text): message = text
      }
      report(MediumError(kind: kind, medium: medium.kind, isActive: true, message: message))
    }
  }

  private func report(_ error: MediumError) {
    if error.isActive {
      logger.warning(
        "medium problem",
        metadata: ["kind": "\(error.kind.rawValue)", "message": "\(error.message)"])
    } else {
      logger.info("medium problem cleared", metadata: ["kind": "\(error.kind.rawValue)"])
    }
    switch error.kind {
    case .microphonePermission: configuration.microphonePermissionErrorHandler?(error.isActive)
    case .bluetoothPower: configuration.bluetoothPowerErrorHandler?(error.isActive)
    case .bluetoothPermission: configuration.bluetoothPermissionErrorHandler?(error.isActive)
    case .unavailable: break
    }
    errorsContinuation.yield(error)
  }
}
