public import Strategy

/// Options for one publication, set in the closure passed to ``MessageManager/publish(_:configure:)``.
public struct PublicationParams: Sendable {
  /// How to discover subscribers. Default: every medium, broadcast and scan, 300 s.
  public var strategy: Strategy = .default
  /// Called once when the publication's TTL runs out. Runs on the manager's actor.
  public var expiredHandler: (@Sendable () -> Void)?
  /// Asks the user for Nearby permission in the app's own way, when this is the first
  /// publish or subscribe and the user has not answered yet. `nil`: the permission gate's
  /// default prompt. See ``PermissionRequestHandler``.
  public var permissionRequestHandler: PermissionRequestHandler?

  public init() {}
}

/// Options for one subscription, set in the closure passed to
/// ``MessageManager/subscribe(onFound:configure:)``.
public struct SubscriptionParams: Sendable {
  /// How to discover publishers. Default: every medium, broadcast and scan, 300 s.
  public var strategy: Strategy = .default
  /// What to look for. Default: other Nearby devices.
  public var deviceTypes: DeviceTypes = .nearbyDevices
  /// Messages of this namespace only (`""`: the project's default namespace).
  public var namespace: String = ""
  /// Messages of this type only; `nil` (the default) for every type in the namespace.
  public var type: String?
  /// How to scan for beacons when ``deviceTypes`` includes `.bleBeacons`.
  public var beaconStrategy: BeaconStrategy = .default
  /// Beacons only of these ids (``deviceTypes`` `.bleBeacons`); empty (the default): every
  /// beacon whose attachments match ``namespace`` and ``type``.
  public var beaconFilters: [BeaconFilter] = []
  /// Called once when the subscription's TTL runs out. Runs on the manager's actor.
  public var expiredHandler: (@Sendable () -> Void)?
  /// As ``PublicationParams/permissionRequestHandler``.
  public var permissionRequestHandler: PermissionRequestHandler?
  /// How many undelivered events ``Subscription/events`` keeps for a slow reader; the oldest
  /// are dropped beyond it (handlers always get every event). Default 1024.
  public var eventBufferSize: Int = 1024

  public init() {}
}
