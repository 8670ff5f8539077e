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
    var transmitting: DirectivesStateMachine.Transmission?
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
    /// When a subscription the resolver does not know (beacons only) expires; `nil` while
    /// paused or without a TTL.
    var expiresAt: NearbyClock.Instant?
    /// The timer that waits for ``expiresAt``, in a group of its own so that a pause or an
    /// unsubscribe ends it at once.
    var expiryTimer: WorkGroup?
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
  /// What the manager's loop reads: what is written off the actor (a sighting reader's
  /// request for a flush, a handle let go), for ``accept(_:)``.
  let inputs = ManagerInputs()
  /// What the manager decides, one input at a time (``accept(_:)``): which chore runs, which
  /// timer sleeps, what a source said.
  var loop = ManagerLoopStateMachine()
  /// The permission gate's latest answer, for the
  /// ``ManagerLoopStateMachine/Chore/applyPermission`` chore to apply.
  var latestPermissionAnswer: Bool?
  /// Which directives are followed and when to ask again (DirectivesStateMachine.swift).
  var directivesMachine = DirectivesStateMachine()
  /// One pass of ``reconcileMediums()`` at a time.
  var mediumsPass = PassGate()
  /// Puts the resolver's events in order (EventSequencer.swift).
  var eventSequencer = EventSequencer()
  /// The manager's one task and its task group, where all its work runs
  /// (MessageManager+Loop.swift); ended at shutdown, or when the manager is released.
  let work: WorkGroup
  /// Which handles pause, from the permission and the app state (PauseStateMachine.swift).
  var pausing = PauseStateMachine()
  /// While the user is asked for consent: the answers awaited by concurrent first
  /// publishes/subscribes (`nil`: no request in progress).
  var permissionWaiters: [CheckedContinuation<Bool, Never>]?
  /// The manager's clock (``Configuration/clock``), read as instants its machines keep.
  let clock: NearbyClock
  /// What the beacon subscriptions decide: beacons followed, look-ups, losses.
  var beaconTracking: BeaconTracking
  /// The beacon sweep that runs, if one does: a sweep loop of another number ends when it
  /// next wakes.
  var beaconSweep: UInt64?
  /// The number of the last beacon sweep started.
  var beaconSweepsStarted: UInt64 = 0
  /// Says the manager was released without ``shutdown()`` (finished empty by a shutdown):
  /// what the manager's task waits for once its work has ended.
  let released: AsyncStream<Void>.Continuation
  /// The beacon frames the manager has handled: what a test that moves the manager's clock
  /// waits for before it moves it again (a frame reaches the manager through a reader task,
  /// later than the air sent it).
  var beaconFramesHandled = 0
  /// One pass of ``reconcileBeaconScanning()`` at a time.
  var beaconScanPass = PassGate()

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
    var paces: AsyncStream<TransmitPaceChange>?
    do {
      for provider in configuration.mediums {
        let context = MediumContext(deviceID: credentials.id, logger: logger)
        mediums.append(try await provider.make(context))
      }
      events = try await resolver.events(for: credentials)
      if let source = resolver as? any TransmitPaceSource {
        paces = try await source.transmitPaces(for: credentials)
      }
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
    let teardown = Teardown(
      mediums: mediums, resolver: resolver, credentials: credentials, released: releasedSignal)
    work = WorkGroup(afterwards: teardown.run)
    if let gate = configuration.permission {
      pausing = PauseStateMachine(permission: await gate.answer() == true ? .granted : .denied)
      let answers = gate.answers()
      start { [weak self] in
        for await answer in answers {
          guard let self else { return }
          await self.accept(.occurred(.permissionAnswer(answer)))
        }
      }
    }

    // A reader per source hands what it reads to the manager's machine, one at a time.
    for (index, medium) in mediums.enumerated() {
      let sightings = medium.sightings
      let statuses = medium.statusUpdates
      let inbox = inbox
      let inputs = inputs
      start {
        for await sighting in sightings where inbox.append(sighting) {
          inputs.request(.flushSightings)
        }
      }
      if medium.capabilities.contains(.beacons) {
        let beacons = medium.beaconSightings
        start { [weak self] in
          for await sighting in beacons {
            guard let self else { return }
            await self.accept(.occurred(.beaconHeard(sighting)))
          }
        }
      }
      start { [weak self] in
        for await status in statuses {
          guard let self else { return }
          await self.accept(.occurred(.mediumStatus(medium: index, status)))
        }
      }
    }
    startLoop()
    start { [weak self] in
      for await event in events {
        guard let self else { return }
        await self.accept(.occurred(.resolverEvent(event)))
      }
      await self?.accept(.occurred(.resolverEventsEnded))
    }
    if let paces {
      // The pace concerns only the mediums (each ignores one for a token it does not
      // transmit), not the manager's state: handed on as it comes.
      let pacedMediums = mediums
      start {
        for await change in paces {
          for medium in pacedMediums where change.mediums.contains(medium.kind) {
            await medium.setPace(change.pace, for: change.token)
          }
        }
      }
    }
    logger.debug(
      "message manager started",
      metadata: [
        "resolver": "\(configuration.resolver.name)",
        "mediums": "\(mediums.map(\.name).joined(separator: ","))",
      ])
  }

  deinit {
    work.end()
    inputs.finish()
    errorsContinuation.finish()
    if !loop.isShutDown { released.yield() }
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
  /// Returns once all of the manager's work has ended (a call made from inside that work,
  /// when the resolver drops the device, ends it and returns; a later call awaits it).
  public func shutdown() async {
    if !loop.isShutDown {
      accept(.shutdownBegan)
      stopHandles()
      endPermissionRequest()
      work.end()
      released.finish()
      inputs.finish()
      for slot in slots { await slot.medium.shutdown() }
      do {
        try await resolver.unregister(credentials)
      } catch {
        logger.warning("unregister failed", metadata: ["error": "\(error)"])
      }
      errorsContinuation.finish()
      accept(.shutdownEnded)
      logger.debug("message manager shut down")
    }
    guard !work.isCurrent else { return }
    await work.ended()
  }

  /// Whether ``shutdown()`` has begun: nothing new starts from then on.
  var isShutDown: Bool { loop.isShutDown }

  /// Every handle goes inactive and every subscription's stream finishes.
  private func stopHandles() {
    for record in publications.values { record.cell.set(.inactive) }
    for record in subscriptions.values {
      record.expiryTimer?.end()
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
