public import Core
public import Foundation
public import Logging
public import PermissionStore
public import Strategy

/// Background mode and the publications and subscriptions that run in background (the
/// seed's background mode with NSUserDefaults save/restore), kept in the app's
/// `DefaultsStore` so that `nearby-restore` can bring them back when the app is not running.
///
/// Background work is BLE-only: every descriptor is checked and stored with
/// `allowInBackground` set. Descriptors are saved as soon as they change (each change is a
/// durable, cross-process read-modify-write of the store), under ``publicationsKey`` and
/// ``subscriptionsKey``; the mode under ``enabledKey``.
///
/// ```swift
/// let background = BackgroundPersistence(store: store)
/// try await background.setEnabled(true)
/// let subscription = try await background.subscribe(
///   BackgroundSubscription(namespace: "com.example", strategy: .bleOnly), on: manager)
/// // at the next start, or in nearby-restore:
/// let restored = await background.restore(into: manager)
/// ```
public final class BackgroundPersistence: Sendable {
  public static let enabledKey = "nearby.background.enabled"
  public static let publicationsKey = "nearby.background.publications"
  public static let subscriptionsKey = "nearby.background.subscriptions"

  /// The store that holds the mode and the descriptors.
  public let store: DefaultsStore
  private let logger: Logger

  public init(store: DefaultsStore, logger: Logger = Logger(label: "nearby.background")) {
    self.store = store
    self.logger = logger
  }

  // MARK: Mode

  /// Whether background mode is on (default off): `restore(into:)` and `nearby-restore` do
  /// nothing while it is off.
  public var isEnabled: Bool { store.bool(forKey: Self.enabledKey) == true }

  /// Turns background mode on or off; durable on return.
  ///
  /// - Throws: the store's errors (`StoreError`).
  public func setEnabled(_ enabled: Bool) async throws {
    try await store.set(enabled, forKey: Self.enabledKey)
  }

  // MARK: Descriptors

  /// The recorded background publications.
  public var publications: [BackgroundPublication] {
    (try? store.value([BackgroundPublication].self, forKey: Self.publicationsKey)) ?? []
  }

  /// The recorded background subscriptions.
  public var subscriptions: [BackgroundSubscription] {
    (try? store.value([BackgroundSubscription].self, forKey: Self.subscriptionsKey)) ?? []
  }

  /// Checks that `strategy` may run in background and returns it with `allowInBackground`.
  ///
  /// - Throws: `StrategyError.backgroundRequiresBLEOnly` for any medium other than BLE alone,
  ///   or another `StrategyError`.
  public static func backgroundStrategy(_ strategy: Strategy) throws(StrategyError) -> Strategy {
    var strategy = strategy
    strategy.allowInBackground = true
    try strategy.validate()
    return strategy
  }

  /// Records a background publication (replacing one with the same id). Durable on return.
  ///
  /// - Throws: `StrategyError` when the strategy is not BLE-only, `MessageError` for a
  ///   message over the limits, or the store's errors.
  @discardableResult
  public func add(_ publication: BackgroundPublication) async throws -> BackgroundPublication {
    var publication = publication
    publication.strategy = try Self.backgroundStrategy(publication.strategy)
    try publication.message.validate()
    let recorded = publication
    try await store.update(Self.publicationsKey, as: [BackgroundPublication].self) {
      ($0 ?? []).filter { $0.id != recorded.id } + [recorded]
    }
    return recorded
  }

  /// Records a background subscription (replacing one with the same id). Durable on return.
  ///
  /// - Throws: `StrategyError` when the strategy is not BLE-only, `MessageError` for a bad
  ///   namespace or type, or the store's errors.
  @discardableResult
  public func add(_ subscription: BackgroundSubscription) async throws -> BackgroundSubscription {
    var subscription = subscription
    subscription.strategy = try Self.backgroundStrategy(subscription.strategy)
    subscription.beaconStrategy?.allowInBackground = true
    try Message.validate(namespace: subscription.namespace)
    if let type = subscription.type { try Message.validate(type: type) }
    let recorded = subscription
    try await store.update(Self.subscriptionsKey, as: [BackgroundSubscription].self) {
      ($0 ?? []).filter { $0.id != recorded.id } + [recorded]
    }
    return recorded
  }

  /// Forgets the background publication or subscription with `id`. Durable on return.
  ///
  /// - Returns: whether one was recorded.
  /// - Throws: the store's errors.
  @discardableResult
  public func remove(id: String) async throws -> Bool {
    let before = publications.count + subscriptions.count
    try await store.update(Self.publicationsKey, as: [BackgroundPublication].self) {
      $0?.filter { $0.id != id }
    }
    try await store.update(Self.subscriptionsKey, as: [BackgroundSubscription].self) {
      $0?.filter { $0.id != id }
    }
    return publications.count + subscriptions.count < before
  }

  /// Records `publication` and publishes it on `manager`.
  ///
  /// - Throws: the errors of ``add(_:)-(BackgroundPublication)`` and of `publish`.
  public func publish(
    _ publication: BackgroundPublication, on manager: MessageManager
  ) async throws -> Publication {
    let recorded = try await add(publication)
    var params = PublicationParams()
    params.strategy = recorded.strategy
    return try await manager.publish(recorded.message, params: params)
  }

  /// Records `subscription` and subscribes with it on `manager`.
  ///
  /// - Throws: the errors of ``add(_:)-(BackgroundSubscription)`` and of `subscribe`.
  public func subscribe(
    _ subscription: BackgroundSubscription, on manager: MessageManager,
    onFound: (@Sendable (Message) -> Void)? = nil, onLost: (@Sendable (Message) -> Void)? = nil
  ) async throws -> Subscription {
    let recorded = try await add(subscription)
    return try await manager.subscribe(
      params: recorded.params, onFound: onFound, onLost: onLost)
  }

  // MARK: Restore

  /// What ``restore(into:onFound:onLost:now:)`` brought back.
  public struct Restored: Sendable {
    /// The restored publications, by descriptor id.
    public var publications: [String: Publication] = [:]
    /// The restored subscriptions, by descriptor id.
    public var subscriptions: [String: Subscription] = [:]
    /// Descriptors whose TTL ran out while nothing ran; they were removed.
    public var expired: [String] = []
    /// Descriptors that could not be restored, with why (they are kept).
    public var failures: [String: String] = [:]
  }

  /// Recreates every recorded background publication and subscription on `manager`, when
  /// background mode is on (otherwise returns nothing). A finite TTL continues from the
  /// descriptor's `createdAt`; descriptors that ran out are removed from the store. `onFound`
  /// and `onLost` receive the events of every restored subscription, with its descriptor.
  /// A handle that fails is reported in ``Restored/failures`` (and logged); its descriptor is
  /// kept. To keep following the store afterwards, use a ``BackgroundKeeper``.
  public func restore(
    into manager: MessageManager,
    onFound: (@Sendable (BackgroundSubscription, Message) -> Void)? = nil,
    onLost: (@Sendable (BackgroundSubscription, Message) -> Void)? = nil,
    now: Date = Date()
  ) async -> Restored {
    guard isEnabled else {
      logger.info("background mode is off: nothing to restore")
      return Restored()
    }
    let keeper = BackgroundKeeper(
      persistence: self, manager: manager, logger: logger, onFound: onFound, onLost: onLost)
    let changes = await keeper.sync(now: now)
    return Restored(
      publications: await keeper.publicationHandles,
      subscriptions: await keeper.subscriptionHandles, expired: changes.expired,
      failures: changes.failures)
  }
}

extension BackgroundSubscription {
  var params: SubscriptionParams {
    var params = SubscriptionParams()
    params.namespace = namespace
    params.type = type
    params.strategy = strategy
    if var beaconStrategy {
      // Background work by definition, even in a file edited by hand.
      beaconStrategy.allowInBackground = true
      params.deviceTypes = .bleBeacons
      params.beaconStrategy = beaconStrategy
    }
    return params
  }
}
