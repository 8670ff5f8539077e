public import Foundation

/// A registered beacon as the resolver answers for an observed id: its name and the
/// attachments that matched the asked namespaced types.
public struct BeaconInfo: Sendable, Hashable {
  /// The id that was observed (for an Eddystone-EID, the ephemeral id heard).
  public var observed: BeaconID
  /// The beacon's registered name (`kind!hex-id`): stable even when the observed id rotates.
  public var beaconName: String
  /// The attachments that matched.
  public var attachments: [BeaconAttachment]

  public init(observed: BeaconID, beaconName: String, attachments: [BeaconAttachment]) {
    self.observed = observed
    self.beaconName = beaconName
    self.attachments = attachments
  }
}

/// Data registered on the resolver for a beacon, under a namespace and type (≤ 1024 bytes).
public struct BeaconAttachment: Sendable, Hashable {
  /// The attachment's name on the resolver (unique per beacon).
  public var name: String
  /// The attachment's namespace.
  public var namespace: String
  /// The attachment's type.
  public var type: String
  /// The attachment's data.
  public var data: Data
  /// Whether another project's public namespace holds it: it reaches only subscriptions that
  /// name ``namespace``, never one asking for every namespace of the project.
  public var isShared: Bool
  /// Delivered only while the beacon is estimated within this many metres, if set: found
  /// when it comes within, lost once it is past ``leaveDistance`` (a margin, so that a noisy
  /// signal at the edge does not flap).
  public var maxDistance: Double?

  public init(
    name: String, namespace: String, type: String, data: Data, isShared: Bool = false,
    maxDistance: Double? = nil
  ) {
    self.name = name
    self.namespace = namespace
    self.type = type
    self.data = data
    self.isShared = isShared
    self.maxDistance = maxDistance
  }

  /// How far a found attachment with ``maxDistance`` may go before it is lost: 25 % more, and
  /// at least 1 m more.
  public var leaveDistance: Double? {
    maxDistance.map { max($0 * 1.25, $0 + 1) }
  }

  /// The attachment as the message a beacon subscription delivers.
  public var message: Message { Message(content: data, type: type, namespace: namespace) }
}
