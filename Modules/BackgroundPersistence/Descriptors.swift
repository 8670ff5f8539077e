public import Core
public import Foundation
public import Strategy

/// A publication kept alive in background: what `restore(into:)` publishes again.
public struct BackgroundPublication: Sendable, Hashable, Codable, Identifiable {
  /// A stable id (a UUID string) to remove it by.
  public var id: String
  public var message: Message
  /// BLE-only with `allowInBackground` set.
  public var strategy: Strategy
  /// When it was recorded; a finite TTL counts from here, across restarts.
  public var createdAt: Date

  public init(
    id: String = UUID().uuidString, message: Message, strategy: Strategy, createdAt: Date = Date()
  ) {
    self.id = id
    self.message = message
    self.strategy = strategy
    self.createdAt = createdAt
  }
}

/// A subscription kept alive in background: its filters and strategy.
public struct BackgroundSubscription: Sendable, Hashable, Codable, Identifiable {
  public var id: String
  /// Messages of this namespace only (`""`: the project's default namespace).
  public var namespace: String
  /// Messages of this type only; `nil` for every type.
  public var type: String?
  /// BLE-only with `allowInBackground` set.
  public var strategy: Strategy
  /// Set for a subscription to beacons (`deviceTypes` `.bleBeacons`), with
  /// `allowInBackground`; `nil` for one to nearby devices (files written before beacons
  /// existed decode as such).
  public var beaconStrategy: BeaconStrategy?
  public var createdAt: Date

  public init(
    id: String = UUID().uuidString, namespace: String = "", type: String? = nil,
    strategy: Strategy, beaconStrategy: BeaconStrategy? = nil, createdAt: Date = Date()
  ) {
    self.id = id
    self.namespace = namespace
    self.type = type
    self.strategy = strategy
    self.beaconStrategy = beaconStrategy
    self.createdAt = createdAt
  }
}

extension Strategy {
  /// Whether work of this strategy recorded at `createdAt` has run out by `now`, and if not,
  /// the strategy with the TTL that is left.
  func remaining(since createdAt: Date, now: Date) -> Strategy? {
    guard let seconds = ttl.seconds else { return self }
    let left = seconds - now.timeIntervalSince(createdAt)
    guard left > 0, let ttl = try? TTL(seconds: left) else { return nil }
    var strategy = self
    strategy.ttl = ttl
    return strategy
  }
}
