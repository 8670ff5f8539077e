public import Core
public import Foundation
public import Logging
import PermissionStore

/// Keeps the background work recorded in a store running on a manager, following the store
/// as it changes (the app or `nearby background` adding or removing descriptors, turning
/// background mode off or on): what `nearby-restore` runs.
public actor BackgroundKeeper {
  /// What one ``sync(now:)`` changed.
  public struct Changes: Sendable, Hashable {
    /// Descriptor ids started (or restarted because the descriptor changed).
    public var started: [String] = []
    /// Descriptor ids stopped (removed, changed, or background mode turned off).
    public var stopped: [String] = []
    /// Descriptors whose TTL ran out; they were removed from the store.
    public var expired: [String] = []
    /// Descriptors that could not be started, with why (retried at the next sync).
    public var failures: [String: String] = [:]
  }

  private let persistence: BackgroundPersistence
  private let manager: MessageManager
  private let onFound: (@Sendable (BackgroundSubscription, Message) -> Void)?
  private let onLost: (@Sendable (BackgroundSubscription, Message) -> Void)?
  private let logger: Logger
  private var publications: [String: (descriptor: BackgroundPublication, handle: Publication)] =
    [:]
  private var subscriptions: [String: (descriptor: BackgroundSubscription, handle: Subscription)] =
    [:]
  private var isSyncing = false
  private var syncAgain = false

  /// A keeper of `persistence`'s work on `manager`; `onFound` and `onLost` get the events of
  /// every kept subscription, with its descriptor (on the manager's actor).
  public init(
    persistence: BackgroundPersistence, manager: MessageManager,
    logger: Logger = Logger(label: "nearby.background"),
    onFound: (@Sendable (BackgroundSubscription, Message) -> Void)? = nil,
    onLost: (@Sendable (BackgroundSubscription, Message) -> Void)? = nil
  ) {
    self.persistence = persistence
    self.manager = manager
    self.logger = logger
    self.onFound = onFound
    self.onLost = onLost
  }

  /// The publications running now, by descriptor id.
  public var publicationHandles: [String: Publication] { publications.mapValues(\.handle) }
  /// The subscriptions running now, by descriptor id.
  public var subscriptionHandles: [String: Subscription] { subscriptions.mapValues(\.handle) }

  /// Brings the running handles in line with the store: starts what is recorded and not
  /// running, stops what runs and is no longer recorded (everything while background mode is
  /// off), restarts what changed, and removes descriptors whose TTL ran out. A sync asked for
  /// while one runs makes the running one go round again (and returns no changes itself).
  @discardableResult
  public func sync(now: Date = Date()) async -> Changes {
    guard !isSyncing else {
      syncAgain = true
      return Changes()
    }
    isSyncing = true
    defer { isSyncing = false }
    var total = Changes()
    repeat {
      syncAgain = false
      let changes = await syncOnce(now: now)
      total.started += changes.started
      total.stopped += changes.stopped
      total.expired += changes.expired
      total.failures.merge(changes.failures) { $1 }
    } while syncAgain
    return total
  }

  private func syncOnce(now: Date) async -> Changes {
    var changes = Changes()
    let enabled = persistence.isEnabled
    let wantedPublications = enabled ? persistence.publications : []
    let wantedSubscriptions = enabled ? persistence.subscriptions : []

    for (id, running) in publications
    where !wantedPublications.contains(running.descriptor) || running.handle.status == .inactive {
      publications[id] = nil
      await running.handle.cancel()
      changes.stopped.append(id)
    }
    for (id, running) in subscriptions
    where !wantedSubscriptions.contains(running.descriptor) || running.handle.status == .inactive {
      subscriptions[id] = nil
      await running.handle.cancel()
      changes.stopped.append(id)
    }
    for descriptor in wantedPublications where publications[descriptor.id] == nil {
      guard let strategy = descriptor.strategy.remaining(since: descriptor.createdAt, now: now)
      else {
        changes.expired.append(descriptor.id)
        continue
      }
      var params = PublicationParams()
      params.strategy = strategy
      do {
        let handle = try await manager.publish(descriptor.message, params: params)
        publications[descriptor.id] = (descriptor, handle)
        changes.started.append(descriptor.id)
      } catch {
        changes.failures[descriptor.id] = "\(error)"
      }
    }
    for descriptor in wantedSubscriptions where subscriptions[descriptor.id] == nil {
      guard let strategy = descriptor.strategy.remaining(since: descriptor.createdAt, now: now)
      else {
        changes.expired.append(descriptor.id)
        continue
      }
      var params = descriptor.params
      params.strategy = strategy
      var found: (@Sendable (Message) -> Void)?
      if let onFound { found = { onFound(descriptor, $0) } }
      var lost: (@Sendable (Message) -> Void)?
      if let onLost { lost = { onLost(descriptor, $0) } }
      do {
        let handle = try await manager.subscribe(params: params, onFound: found, onLost: lost)
        subscriptions[descriptor.id] = (descriptor, handle)
        changes.started.append(descriptor.id)
      } catch {
        changes.failures[descriptor.id] = "\(error)"
      }
    }
    for id in changes.expired {
      do {
        try await persistence.remove(id: id)
      } catch {
        logger.warning(
          "removing an expired background descriptor failed",
          metadata: ["id": "\(id)", "error": "\(error)"])
      }
    }
    for (id, reason) in changes.failures {
      logger.error(
        "a background handle could not be started", metadata: ["id": "\(id)", "error": "\(reason)"])
    }
    if changes != Changes() {
      logger.info(
        "background work synced with the store",
        metadata: [
          "started": "\(changes.started.count)", "stopped": "\(changes.stopped.count)",
          "expired": "\(changes.expired.count)", "failed": "\(changes.failures.count)",
          "publications": "\(publications.count)", "subscriptions": "\(subscriptions.count)",
        ])
    }
    return changes
  }

  /// Syncs each time the mode or the descriptors change in the store (in any process), until
  /// the calling task is cancelled; `synced` gets what each sync changed.
  public func follow(synced: (@Sendable (Changes) async -> Void)? = nil) async {
    let keys: Set<String> = [
      BackgroundPersistence.enabledKey, BackgroundPersistence.publicationsKey,
      BackgroundPersistence.subscriptionsKey,
    ]
    for await event in persistence.store.events() {
      let relevant: Bool
      switch event {
      case .changed(let changed, _): relevant = !changed.isDisjoint(with: keys)
      case .corruptFileMovedAside: relevant = true
      case .watchFailed: relevant = false
      }
      guard relevant else { continue }
      let changes = await sync()
      await synced?(changes)
    }
  }

  /// Stops every kept handle.
  public func stopAll() async {
    for running in publications.values { await running.handle.cancel() }
    for running in subscriptions.values { await running.handle.cancel() }
    publications.removeAll()
    subscriptions.removeAll()
  }
}
