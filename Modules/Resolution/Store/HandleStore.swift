public import Core

/// The part of a ``ResolutionStore`` that holds publications and subscriptions, indexed by
/// device and by (namespace, type).
public protocol HandleStore: AnyObject {
  // Publications
  func publication(_ id: PublicationID) throws -> PublicationRecord?
  func savePublication(_ publication: PublicationRecord) throws
  func removePublication(_ id: PublicationID) throws -> PublicationRecord?
  func publications(on device: DeviceID) throws -> [PublicationRecord]
  /// The ids of the device's publications (a default reads the records).
  func publicationIDs(on device: DeviceID) throws -> [PublicationID]
  /// How many publications the device has, and which of `ids` are among them: what the
  /// handle limit asks (a default reads ``publicationIDs(on:)``; a store that counts answers
  /// in time that does not grow with the device's publications).
  func publicationTally(on device: DeviceID, among ids: Set<PublicationID>) throws -> HandleTally<
    PublicationID
  >
  /// The device's publications whose messages `subscription` accepts.
  func publications(on device: DeviceID, acceptedBy subscription: SubscriptionRecord)
    throws -> [PublicationRecord]

  // Subscriptions
  func subscription(_ id: SubscriptionID) throws -> SubscriptionRecord?
  func saveSubscription(_ subscription: SubscriptionRecord) throws
  func removeSubscription(_ id: SubscriptionID) throws -> SubscriptionRecord?
  func subscriptions(on device: DeviceID) throws -> [SubscriptionRecord]
  /// The ids of the device's subscriptions (a default reads the records).
  func subscriptionIDs(on device: DeviceID) throws -> [SubscriptionID]
  /// How many subscriptions the device has, and which of `ids` are among them (see
  /// ``publicationTally(on:among:)``).
  func subscriptionTally(on device: DeviceID, among ids: Set<SubscriptionID>) throws
    -> HandleTally<SubscriptionID>
  /// The device's subscriptions that accept `publication`'s message.
  func subscriptions(on device: DeviceID, accepting publication: PublicationRecord)
    throws -> [SubscriptionRecord]
}

extension HandleStore {
  public func publicationIDs(on device: DeviceID) throws -> [PublicationID] {
    try publications(on: device).map(\.id)
  }

  public func subscriptionIDs(on device: DeviceID) throws -> [SubscriptionID] {
    try subscriptions(on: device).map(\.id)
  }

  public func publicationTally(on device: DeviceID, among ids: Set<PublicationID>) throws
    -> HandleTally<PublicationID>
  {
    HandleTally(all: try publicationIDs(on: device), among: ids)
  }

  public func subscriptionTally(on device: DeviceID, among ids: Set<SubscriptionID>) throws
    -> HandleTally<SubscriptionID>
  {
    HandleTally(all: try subscriptionIDs(on: device), among: ids)
  }
}
