public import Core
public import Foundation
public import Tokens

/// Where the resolution engine keeps its state. The engine calls its store from one isolation
/// domain or thread at a time (the in-process resolver's actor, or one database transaction on
/// the server's storage thread), so calls are synchronous. They throw when the storage fails
/// (a database error); the engine passes the error on and the caller abandons the transaction.
///
/// The in-memory store is ``InMemoryResolutionStore``. Every implementation keeps the
/// indexes the engine relies on: handles by device and by (namespace, type), sightings by
/// device pair, deliveries both ways, and deadlines by time.
public protocol ResolutionStore: AnyObject {
  // Devices
  func device(_ id: DeviceID) throws -> DeviceRecord?
  /// Inserts or replaces the device.
  func saveDevice(_ device: DeviceRecord) throws
  func removeDevice(_ id: DeviceID) throws
  /// Up to `limit` devices whose last report was before `time`, the longest silent first.
  func silentDevices(before time: Date, limit: Int) throws -> [DeviceID]

  // Tokens
  /// Makes `token` resolve to `device` until `until`.
  func bind(_ token: Token, to device: DeviceID, until: Date) throws
  /// The device `token` resolved to at `time`, if its binding had not run out.
  func device(heard token: Token, at time: Date) throws -> DeviceID?
  /// When `token`'s binding runs out, if it is bound.
  func binding(of token: Token) throws -> Date?
  func unbind(_ token: Token) throws

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

  // Sightings
  func lastSighting(_ key: ProximityKey) throws -> Date?
  /// Records a sighting; returns the previous time, if any.
  func recordSighting(_ key: ProximityKey, at time: Date) throws -> Date?
  func removeSighting(_ key: ProximityKey) throws
  /// Devices with at least one remembered sighting with `device`, in either direction.
  func neighbors(of device: DeviceID) throws -> [DeviceID]

  // Deliveries
  /// Records that `publication` is delivered to `subscription`; true if it is the first
  /// publication of that message for the subscription (a `found`).
  func addDelivery(
    subscription: SubscriptionID, publication: PublicationID, message: MessageKey
  ) throws -> Bool
  /// Removes the delivery; true if it was the last publication of that message for the
  /// subscription (a `lost`). False also when there was no such delivery.
  func removeDelivery(
    subscription: SubscriptionID, publication: PublicationID, message: MessageKey
  ) throws -> Bool
  func isDelivered(subscription: SubscriptionID, publication: PublicationID) throws -> Bool
  /// The subscriptions `publication` is delivered to.
  func deliveries(of publication: PublicationID) throws -> [SubscriptionID]
  /// The publications delivered to `subscription`, with their messages.
  func deliveries(to subscription: SubscriptionID) throws -> [(PublicationID, MessageKey)]

  // Deadlines
  func schedule(_ deadline: Deadline) throws
  /// Removes and returns the earliest deadline at or before `now`.
  func popDeadline(dueAt now: Date) throws -> Deadline?
  func nextDeadline() throws -> Date?

  /// How much the store holds.
  func counts() throws -> ResolutionCounts
}

extension ResolutionStore {
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
