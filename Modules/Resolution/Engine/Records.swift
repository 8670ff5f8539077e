@_spi(Resolver) public import Core
public import Foundation
public import Strategy
public import Tokens

/// A registered device.
public struct DeviceRecord: Sendable, Hashable, Codable {
  public var id: DeviceID
  /// The project its API key belongs to; nothing crosses projects.
  public var project: String
  /// What the resolver keeps of the device's secret: `sha256:` and the SHA-256 of the secret
  /// in hex (see ``digest(ofSecret:)``), never the secret itself; a device registered before
  /// digests holds its secret here until its next authentication replaces it.
  public var secretDigest: String
  /// The token it transmits now.
  public var token: Token
  /// When ``token`` is to be replaced.
  public var tokenExpiresAt: Date
  /// How many of its publications and subscriptions broadcast or scan on each medium.
  public var usage: MediumUsage
  /// The revision of the last directives answered (see the `revision` of Core's `Directives`).
  public var revision: UInt64 = 0
  /// The sequence number of the last event addressed to it.
  public var lastEventSequence: UInt64 = 0
  /// When it last reported (or registered): a device silent for
  /// ``ResolutionConfiguration/deviceExpiry`` is removed.
  public var lastReportAt: Date
  /// The devices it came near in the current minute (see
  /// ``ResolutionConfiguration/maximumNewNeighborsPerMinute``).
  public var newNeighbors = NewNeighborWindow()
  /// Whether the resolver server keeps this device's publication and subscription ids apart
  /// from every other device's (it stores them under a mask only the device's secret
  /// derives): true for devices registered since ids were scoped, false for those before,
  /// whose stored ids stay as they were sent.
  public var scopesHandles = true

  public init(
    id: DeviceID, project: String, secretDigest: String, token: Token, tokenExpiresAt: Date,
    usage: MediumUsage = MediumUsage(), lastReportAt: Date? = nil
  ) {
    self.id = id
    self.project = project
    self.secretDigest = secretDigest
    self.token = token
    self.tokenExpiresAt = tokenExpiresAt
    self.usage = usage
    self.lastReportAt = lastReportAt ?? tokenExpiresAt
  }
}

extension DeviceRecord {
  /// What a report's answer tells the device at `now`: its revision, token and the time
  /// left on it, and the mediums its handles broadcast and scan on.
  @_spi(Resolver) public func directives(now: Date) -> Directives {
    Directives(
      revision: revision, token: token, tokenExpiresIn: tokenExpiresAt.timeIntervalSince(now),
      broadcast: usage.broadcast, scan: usage.scan)
  }
}

/// How many devices a device came near (a sighting that starts a nearness: none before, or
/// the last one stale) in the minute that began at ``since``: what bounds a relay that
/// claims to hear many devices at once.
public struct NewNeighborWindow: Sendable, Hashable, Codable {
  /// When the current minute began; nil before the first.
  public var since: Date?
  public var count = 0

  public init(since: Date? = nil, count: Int = 0) {
    self.since = since
    self.count = count
  }

  /// Counts one more new neighbour at `now` if fewer than `limit` were counted in the
  /// minute; false (and nothing counted) when the minute's budget is spent.
  public mutating func admit(now: Date, limit: Int) -> Bool {
    if let since, since <= now, now.timeIntervalSince(since) < 60 {
      guard count < limit else { return false }
      count += 1
    } else {
      since = now
      count = 1
    }
    return true
  }
}

/// Counts, per medium, of a device's publications and subscriptions that broadcast and that
/// scan there, so directives come from counters rather than from walking every handle.
public struct MediumUsage: Sendable, Hashable, Codable {
  public var broadcastCounts: [UInt32: Int] = [:]
  public var scanCounts: [UInt32: Int] = [:]

  public init() {}

  /// Adds (`sign` 1) or removes (`sign` -1) one strategy.
  public mutating func apply(_ strategy: Strategy, sign: Int) {
    for medium in strategy.effectiveMediums.elements {
      if strategy.mode.contains(.broadcast) {
        broadcastCounts[medium.rawValue, default: 0] += sign
        if broadcastCounts[medium.rawValue] == 0 { broadcastCounts[medium.rawValue] = nil }
      }
      if strategy.mode.contains(.scan) {
        scanCounts[medium.rawValue, default: 0] += sign
        if scanCounts[medium.rawValue] == 0 { scanCounts[medium.rawValue] = nil }
      }
    }
  }

  /// The mediums at least one handle broadcasts on.
  public var broadcast: DiscoveryMediums {
    DiscoveryMediums(rawValue: broadcastCounts.keys.reduce(0, |))
  }
  /// The mediums at least one handle scans on.
  public var scan: DiscoveryMediums { DiscoveryMediums(rawValue: scanCounts.keys.reduce(0, |)) }
}

/// A message with its hash computed once, so that content up to 100 KiB is not hashed again
/// on every lookup.
public struct MessageKey: Sendable, Hashable {
  public let message: Message
  private let hashValueOfMessage: Int

  public init(_ message: Message) {
    self.message = message
    var hasher = Hasher()
    hasher.combine(message)
    hashValueOfMessage = hasher.finalize()
  }

  public func hash(into hasher: inout Hasher) { hasher.combine(hashValueOfMessage) }

  public static func == (lhs: MessageKey, rhs: MessageKey) -> Bool {
    lhs.hashValueOfMessage == rhs.hashValueOfMessage && lhs.message == rhs.message
  }
}

/// A publication held by the resolver.
public struct PublicationRecord: Sendable, Hashable {
  public var id: PublicationID
  public var device: DeviceID
  public var project: String
  public var key: MessageKey
  public var strategy: Strategy
  /// `nil`: never expires.
  public var expiresAt: Date?

  public var message: Message { key.message }

  public init(
    id: PublicationID, device: DeviceID, project: String, message: Message, strategy: Strategy,
    expiresAt: Date?
  ) {
    self.id = id
    self.device = device
    self.project = project
    self.key = MessageKey(message)
    self.strategy = strategy
    self.expiresAt = expiresAt
  }
}

/// A subscription held by the resolver.
public struct SubscriptionRecord: Sendable, Hashable {
  public var id: SubscriptionID
  public var device: DeviceID
  public var project: String
  public var namespace: String
  /// `nil`: every type in the namespace.
  public var type: String?
  public var strategy: Strategy
  public var deviceTypes: DeviceTypes
  /// `nil`: never expires.
  public var expiresAt: Date?

  public init(
    id: SubscriptionID, device: DeviceID, project: String, namespace: String, type: String?,
    strategy: Strategy, deviceTypes: DeviceTypes, expiresAt: Date?
  ) {
    self.id = id
    self.device = device
    self.project = project
    self.namespace = namespace
    self.type = type
    self.strategy = strategy
    self.deviceTypes = deviceTypes
    self.expiresAt = expiresAt
  }

  /// Whether the publication's message passes the namespace and type filters.
  public func accepts(_ publication: PublicationRecord) -> Bool {
    publication.message.namespace == namespace
      && (type == nil || type == publication.message.type)
  }
}

/// "`hearer` heard `heard`'s token on `medium`".
public struct ProximityKey: Sendable, Hashable {
  public var hearer: DeviceID
  public var heard: DeviceID
  /// A single medium's raw value.
  public var medium: UInt32

  public init(hearer: DeviceID, heard: DeviceID, medium: DiscoveryMediums) {
    self.hearer = hearer
    self.heard = heard
    self.medium = medium.rawValue
  }
}

/// Something the engine must look at again at a given time.
public enum DeadlineKind: Sendable, Hashable {
  /// A sighting may have gone stale.
  case proximity(ProximityKey)
  /// A publication's TTL may have run out.
  case publicationExpiry(PublicationID)
  /// A subscription's TTL may have run out.
  case subscriptionExpiry(SubscriptionID)
  /// A token may no longer resolve.
  case tokenRetirement(Token)
}

/// A ``DeadlineKind`` with its time; ordered by time.
public struct Deadline: Sendable, Hashable, Comparable {
  public var at: Date
  public var kind: DeadlineKind

  public init(at: Date, kind: DeadlineKind) {
    self.at = at
    self.kind = kind
  }

  public static func < (lhs: Deadline, rhs: Deadline) -> Bool { lhs.at < rhs.at }
}

/// How much the resolver holds. Once every handle is gone, publications, subscriptions and
/// deliveries are zero; sightings go when stale or when a device unregisters; tokens and
/// deadlines retire on their own schedule (expiry deadlines of removed handles are dropped
/// when due).
public struct ResolutionCounts: Sendable, Hashable, Codable {
  public var devices = 0
  public var tokens = 0
  public var publications = 0
  public var subscriptions = 0
  /// (subscription, publication) pairs currently delivered.
  public var deliveries = 0
  /// (hearer, heard, medium) sightings currently remembered.
  public var sightings = 0
  public var deadlines = 0

  public init() {}
}
