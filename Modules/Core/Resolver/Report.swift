import Foundation
public import Strategy
public import Tokens

/// A publication as the resolver sees it.
@_spi(Resolver) public struct PublicationSpec: Sendable, Hashable, Codable {
  public var id: PublicationID
  public var message: Message
  public var strategy: Strategy
  public init(id: PublicationID, message: Message, strategy: Strategy) {
    self.id = id
    self.message = message
    self.strategy = strategy
  }
}

/// A subscription as the resolver sees it: which messages it wants and how it discovers.
@_spi(Resolver) public struct SubscriptionSpec: Sendable, Hashable, Codable {
  public var id: SubscriptionID
  /// Messages of this namespace only (`""`: the project's default namespace).
  public var namespace: String
  /// Messages of this type only; `nil` for every type in the namespace.
  public var type: String?
  public var strategy: Strategy
  public var deviceTypes: DeviceTypes

  public init(
    id: SubscriptionID, namespace: String = "", type: String? = nil,
    strategy: Strategy = .default, deviceTypes: DeviceTypes = .nearbyDevices
  ) {
    self.id = id
    self.namespace = namespace
    self.type = type
    self.strategy = strategy
    self.deviceTypes = deviceTypes
  }

  /// Whether a message passes this subscription's namespace and type filters.
  public func accepts(_ message: Message) -> Bool {
    message.namespace == namespace && (type == nil || type == message.type)
  }
}

/// What a device tells its resolver: changes to its publications and subscriptions, and the
/// tokens it has heard. Every field may be empty; an empty report just asks for directives.
@_spi(Resolver) public struct Report: Sendable, Hashable, Codable {
  public var publish: [PublicationSpec]
  public var unpublish: [PublicationID]
  public var subscribe: [SubscriptionSpec]
  public var unsubscribe: [SubscriptionID]
  public var sightings: [Sighting]

  public init(
    publish: [PublicationSpec] = [], unpublish: [PublicationID] = [],
    subscribe: [SubscriptionSpec] = [], unsubscribe: [SubscriptionID] = [],
    sightings: [Sighting] = []
  ) {
    self.publish = publish
    self.unpublish = unpublish
    self.subscribe = subscribe
    self.unsubscribe = unsubscribe
    self.sightings = sightings
  }

  /// The most sightings one report may carry: the server refuses more (its work per request
  /// stays bounded) and the manager sends larger batches as several reports.
  public static let maximumSightings = 1024
  /// The most items of each list of handles (`publish`, `unpublish`, `subscribe`,
  /// `unsubscribe`) one report may carry.
  public static let maximumHandleChanges = 256

  /// This report as reports within the limits (itself when it is): the i-th part carries
  /// the i-th slice of each list.
  public var parts: [Report] {
    func slice<T>(_ items: [T], _ index: Int, _ size: Int) -> [T] {
      Array(items.dropFirst(index * size).prefix(size))
    }
    let handles = Self.maximumHandleChanges
    let count = max(
      [publish.count, unpublish.count, subscribe.count, unsubscribe.count]
        .map { ($0 + handles - 1) / handles }.max() ?? 0,
      (sightings.count + Self.maximumSightings - 1) / Self.maximumSightings, 1)
    guard count > 1 else { return [self] }
    return (0..<count).map { index in
      Report(
        publish: slice(publish, index, handles), unpublish: slice(unpublish, index, handles),
        subscribe: slice(subscribe, index, handles),
        unsubscribe: slice(unsubscribe, index, handles),
        sightings: slice(sightings, index, Self.maximumSightings))
    }
  }
}

/// What the resolver tells a device to do: transmit `token` on the `broadcast` mediums, scan
/// on the `scan` mediums, and ask again within `tokenExpiresIn` seconds (the token rotates).
@_spi(Resolver) public struct Directives: Sendable, Hashable, Codable {
  /// Grows with every report the resolver answers for this device: answers that arrive out of
  /// order are recognised, and only the newest directives are followed.
  public var revision: UInt64
  public var token: Token
  /// Seconds until the token rotates; report again then.
  public var tokenExpiresIn: Double
  public var broadcast: DiscoveryMediums
  public var scan: DiscoveryMediums
  /// What to transmit beside the token where a medium has room (peer resolution's digest of
  /// the device's handles); nil from a server.
  public var digest: HandlesDigest?

  public init(
    revision: UInt64, token: Token, tokenExpiresIn: Double, broadcast: DiscoveryMediums,
    scan: DiscoveryMediums, digest: HandlesDigest? = nil
  ) {
    self.revision = revision
    self.token = token
    self.tokenExpiresIn = tokenExpiresIn
    self.broadcast = broadcast
    self.scan = scan
    self.digest = digest
  }
}

extension Directives {
  /// The range the manager keeps its wait before asking again within, whatever a resolver
  /// says: at least a quarter second (a `tokenExpiresIn` of 0 would have it report every
  /// 10 ms), at most an hour (1e300 seconds is no `Duration`).
  public static let refreshRange: ClosedRange<Double> = 0.25...3600

  /// How long to wait before asking again: ``tokenExpiresIn`` within ``refreshRange`` (the
  /// most for a value that is not a finite number).
  public var refreshDelay: Duration {
    let range = Self.refreshRange
    guard tokenExpiresIn.isFinite else { return .seconds(range.upperBound) }
    return .seconds(min(max(tokenExpiresIn, range.lowerBound), range.upperBound))
  }
}

/// Something that happened to one of a device's subscriptions or publications.
@_spi(Resolver) public enum ResolverEvent: Sendable, Hashable, Codable {
  /// A message became nearby for the subscription (once until it is lost).
  case found(SubscriptionID, Message)
  /// A found message is no longer nearby, was unpublished, or expired.
  case lost(SubscriptionID, Message)
  /// The subscription's TTL ran out; it is gone.
  case subscriptionExpired(SubscriptionID)
  /// The publication's TTL ran out; it is gone.
  case publicationExpired(PublicationID)
}

/// A ``ResolverEvent`` with its place in the device's event sequence (1, 2, 3, …).
///
/// A resolver sends each of a device's events once, on one of two channels (a report answer
/// or the event stream); the manager puts them back in sequence order, so a `lost` that took
/// the faster channel is never delivered before its `found`.
@_spi(Resolver) public struct SequencedEvent: Sendable, Hashable, Codable {
  public var sequence: UInt64
  public var event: ResolverEvent

  public init(sequence: UInt64, event: ResolverEvent) {
    self.sequence = sequence
    self.event = event
  }
}

/// The resolver's answer to a report.
@_spi(Resolver) public struct ReportAnswer: Sendable, Hashable, Codable {
  public var directives: Directives
  /// Events for the reporting device that this report caused.
  public var events: [SequencedEvent]

  public init(directives: Directives, events: [SequencedEvent]) {
    self.directives = directives
    self.events = events
  }
}
