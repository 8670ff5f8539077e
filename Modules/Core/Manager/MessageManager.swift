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
/// actor) and streams, in the order the resolver numbered them.
///
/// ```swift
/// let manager = try await MessageManager(apiKey: key, configuration: .init(
///   resolver: .embedded, mediums: [.bluez(), .pulseAudio()]))
/// let publication = try await manager.publish(Message(text: "Alice", type: "name"))
/// let subscription = try await manager.subscribe(onFound: { print("found", $0) })
/// ```
///
/// The manager's work is split by topic over `MessageManager+*.swift`.
public actor MessageManager {
  /// This manager's device, as registered with the resolver.
  public nonisolated let deviceID: DeviceID
  /// Medium problems as they start and clear (the three error handlers see the same).
  /// Keeps the newest 64 when not read.
  public nonisolated let errors: AsyncStream<MediumError>

  struct MediumSlot {
    let medium: any Medium
    /// What the medium was last told to transmit and whether to scan (after success).
    var transmitting: Token?
    var scanning = false
    /// Whether the medium scans for beacons (`nil`: no), and in low power.
    var beaconScan: Bool?
    var problem: MediumError.Kind?
  }

  struct PublicationRecord {
    let spec: PublicationSpec
    let cell: StatusCell
    let expiredHandler: (@Sendable () -> Void)?
  }

  struct SubscriptionRecord {
    let spec: SubscriptionSpec
    let cell: StatusCell
    let continuation: AsyncStream<SubscriptionEvent>.Continuation
    let onFound: (@Sendable (Message) -> Void)?
    let onLost: (@Sendable (Message) -> Void)?
    let expiredHandler: (@Sendable () -> Void)?
    /// Whether the resolver knows this subscription (it looks for nearby devices).
    var reportsToResolver = true
    /// For a subscription to beacons: which beacons and attachments, and how to scan.
    var beacons: BeaconInterest?
    var beaconStrategy = BeaconStrategy.default
    /// The TTL timer of a subscription the resolver does not know (beacons only).
    var expiryTask: Task<Void, Never>?
  }

  let errorsContinuation: AsyncStream<MediumError>.Continuation
  let credentials: DeviceCredentials
  let resolver: any Resolver
  let configuration: Configuration
  let logger: Logger
  var slots: [MediumSlot]
  var publications: [PublicationID: PublicationRecord] = [:]
  var subscriptions: [SubscriptionID: SubscriptionRecord] = [:]
  let inbox = SightingInbox()
  /// Work asked for where nothing can await it, done by tasks of ours (ManagerChores.swift).
  let chores = ManagerChores()
  /// Which directives are followed and when to ask again (DirectivesStateMachine.swift).
  var directivesMachine = DirectivesStateMachine()
  var isReconciling = false
  /// The refresh timer the directives machine armed last.
  var refreshTask: Task<Void, Never>?
  /// The timer task while it runs its refresh (a new timer may be armed meanwhile).
  var runningRefresh: Task<Void, Never>?
  /// The tasks cancelled at shutdown, awaited by `shutdown()`.
  var retiredTasks: [Task<Void, Never>] = []
  /// Puts the resolver's events in order (EventSequencer.swift).
  var eventSequencer = EventSequencer()
  var tasks: [Task<Void, Never>] = []
  var isShutDown = false
  /// Which handles pause, from the permission and the app state (PauseStateMachine.swift).
  var pausing = PauseStateMachine()
  /// The consent request in progress, shared by concurrent first publishes/subscribes.
  var permissionRequest: Task<Bool, Never>?
  /// The manager's clock (``Configuration/clock``), read as instants its machines keep.
  let clock: NearbyClock
  /// What the beacon subscriptions decide: beacons followed, look-ups, losses.
  var beaconTracking: BeaconTracking
  var beaconSweepTask: Task<Void, Never>?
  /// Says the manager was released without ``shutdown()`` (finished empty by a shutdown):
  /// what the teardown task waits for.
  let released: AsyncStream<Void>.Continuation
  /// Stops the mediums and unregisters the device of a manager released without
  /// ``shutdown()`` (a `deinit` cannot await); started with the manager, so it holds
  /// everything it needs but the manager itself.
  var teardown: Task<Void, Never>?
  var isReconcilingBeacons = false
  var beaconReconcileRequested = false

  /// Registers a device with the configured resolver and starts the configured mediums.
  ///
  /// - Throws: ``ManagerError/emptyAPIKey``, ``ManagerError/invalidConfiguration(_:)``; the
  ///   resolver's errors (``ResolverError``); the
  ///   error of a medium factory that fails.
  public init(apiKey: String, configuration: Configuration) async throws {
    guard !apiKey.isEmpty else { throw ManagerError.emptyAPIKey }
    for (name, value) in [
      ("beaconLostAfter", configuration.beaconLostAfter),
      ("beaconSmoothingWindow", configuration.beaconSmoothingWindow),
      ("beaconCacheTTL", configuration.beaconCacheTTL),
    ] where value <= .zero {
      throw ManagerError.invalidConfiguration("\(name) must be longer than zero, got \(value)")
    }
    var logger = configuration.logger
    if MessageManager.isDebugLoggingEnabled { logger.logLevel = .debug }
    let resolver = try await configuration.resolver.make()
    let credentials = try await resolver.register(apiKey: apiKey)
    logger[metadataKey: "nearby.device"] = "\(credentials.id)"
    var mediums: [any Medium] = []
    let events: AsyncStream<SequencedEvent>
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

    let releasedSignal: AsyncStream<Void>
    (releasedSignal, released) = AsyncStream.makeStream(of: Void.self)
    self.deviceID = credentials.id
    (self.errors, self.errorsContinuation) = AsyncStream.makeStream(
      of: MediumError.self, bufferingPolicy: .bufferingNewest(64))
    self.credentials = credentials
    self.resolver = resolver
    self.configuration = configuration
    self.logger = logger
    self.slots = mediums.map { MediumSlot(medium: $0) }
    self.clock = NearbyClock(configuration.clock)
    self.beaconTracking = BeaconTracking(
      settings: .init(
        lostAfter: configuration.beaconLostAfter,
        smoothingWindow: configuration.beaconSmoothingWindow, model: configuration.pathLossModel),
      cacheTTL: configuration.beaconCacheTTL)
    if let gate = configuration.permission {
      pausing = PauseStateMachine(permission: await gate.answer() == true ? .granted : .denied)
      let answers = gate.answers()
      tasks.append(
        ManagerTask.start(for: self) { [weak self] in
          for await answer in answers {
            guard let self else { return }
            await self.permissionAnswerChanged(answer)
          }
        })
    }

    for (index, medium) in mediums.enumerated() {
      let sightings = medium.sightings
      let statuses = medium.statusUpdates
      let inbox = inbox
      let flush = chores.flush
      tasks.append(
        ManagerTask.start(for: self) {
          for await sighting in sightings where inbox.append(sighting) { flush.yield() }
        })
      if medium.capabilities.contains(.beacons) {
        let beacons = medium.beaconSightings
        tasks.append(
          ManagerTask.start(for: self) { [weak self] in
            for await sighting in beacons {
              guard let self else { return }
              await self.beaconHeard(sighting)
            }
          })
      }
      tasks.append(
        ManagerTask.start(for: self) { [weak self] in
          for await status in statuses {
            guard let self else { return }
            await self.mediumStatusChanged(index, status)
          }
        })
    }
    tasks += choreTasks()
    let started = mediums
    teardown = ManagerTask.start(for: self) {
      for await _ in releasedSignal {
        // Each call is bounded by its medium's and its resolver's timeouts.
        for medium in started { await medium.shutdown() }
        try? await resolver.unregister(credentials)
        return
      }
    }
    tasks.append(
      ManagerTask.start(for: self) { [weak self] in
        for await event in events {
          guard let self else { return }
          await self.deliver([event])
        }
        await self?.resolverDropped(because: "the resolver closed this device's event stream")
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
    chores.finish()
    refreshTask?.cancel()
    beaconSweepTask?.cancel()
    for record in subscriptions.values { record.expiryTask?.cancel() }
    errorsContinuation.finish()
    if !isShutDown { released.yield() }
    released.finish()
  }

  /// The publications this manager has running.
  public var publicationCount: Int { publications.count }
  /// The subscriptions this manager has running.
  public var subscriptionCount: Int { subscriptions.count }
  /// The token this device transmits now, once the resolver has issued one.
  public var currentToken: Token? { directivesMachine.directives?.token }

  /// Stops every publication and subscription, shuts the mediums down and unregisters the
  /// device. Later calls to publish or subscribe throw ``ManagerError/shutDown``.
  ///
  /// Returns once every task the manager started has ended (a call made from inside one of
  /// them, when the resolver drops the device, cancels them and returns; a later call
  /// awaits them).
  public func shutdown() async {
    if !isShutDown {
      isShutDown = true
      retiredTasks =
        tasks + [refreshTask, runningRefresh, beaconSweepTask, teardown].compactMap { $0 }
        + subscriptions.values.compactMap(\.expiryTask)
      stopHandles()
      for task in retiredTasks { task.cancel() }
      released.finish()
      chores.finish()
      for slot in slots { await slot.medium.shutdown() }
      do {
        try await resolver.unregister(credentials)
      } catch {
        logger.warning("unregister failed", metadata: ["error": "\(error)"])
      }
      errorsContinuation.finish()
      logger.debug("message manager shut down")
    }
    guard !ManagerTask.isRunning(for: self) else { return }
    for task in retiredTasks { await task.value }
  }

  /// Every handle goes inactive and every subscription's stream finishes.
  private func stopHandles() {
    for record in publications.values { record.cell.set(.inactive) }
    for record in subscriptions.values {
      record.expiryTask?.cancel()
      record.cell.set(.inactive)
      record.continuation.finish()
    }
    publications.removeAll()
    subscriptions.removeAll()
    pausing.removeAll()
  }

  /// The resolver no longer knows this device (unknown device, wrong secret, stream closed):
  /// nothing will be found again, so the manager shuts down and says why.
  func resolverDropped(because reason: String) async {
    guard !isShutDown else { return }
    logger.error(
      "the resolver dropped this device; the manager shuts down", metadata: ["reason": "\(reason)"])
    await shutdown()
  }
}
