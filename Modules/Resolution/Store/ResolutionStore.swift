public import Core
public import Foundation
public import Tokens

/// Where the resolution engine keeps its state. The engine owns its store and calls it from
/// one isolation domain at a time (the in-process resolver's actor), so calls are synchronous.
///
/// The in-memory store is ``InMemoryResolutionStore``. Every implementation keeps the
/// indexes the engine relies on: handles by device and by (namespace, type), sightings by
/// device pair, deliveries both ways, and deadlines by time.
public protocol ResolutionStore: AnyObject {
  // Devices
  func device(_ id: DeviceID) -> DeviceRecord?
  /// Inserts or replaces the device.
  func saveDevice(_ device: DeviceRecord)
  func removeDevice(_ id: DeviceID)

  // Tokens
  /// Makes `token` resolve to `device` until `until`.
  func bind(_ token: Token, to device: DeviceID, until: Date)
  /// The device `token` resolved to at `time`, if its binding had not run out.
  func device(heard token: Token, at time: Date) -> DeviceID?
  /// When `token`'s binding runs out, if it is bound.
  func binding(of token: Token) -> Date?
  func unbind(_ token: Token)

  // Publications
  func publication(_ id: PublicationID) -> PublicationRecord?
  func savePublication(_ publication: PublicationRecord)
  func removePublication(_ id: PublicationID) -> PublicationRecord?
  func publications(on device: DeviceID) -> [PublicationRecord]
  /// The device's publications whose messages `subscription` accepts.
  func publications(on device: DeviceID, acceptedBy subscription: SubscriptionRecord)
    -> [PublicationRecord]

  // Subscriptions
  func subscription(_ id: SubscriptionID) -> SubscriptionRecord?
  func saveSubscription(_ subscription: SubscriptionRecord)
  func removeSubscription(_ id: SubscriptionID) -> SubscriptionRecord?
  func subscriptions(on device: DeviceID) -> [SubscriptionRecord]
  /// The device's subscriptions that accept `publication`'s message.
  func subscriptions(on device: DeviceID, accepting publication: PublicationRecord)
    -> [SubscriptionRecord]

  // Sightings
  func lastSighting(_ key: ProximityKey) -> Date?
  /// Records a sighting; returns the previous time, if any.
  func recordSighting(_ key: ProximityKey, at time: Date) -> Date?
  func removeSighting(_ key: ProximityKey)
  /// Devices with at least one remembered sighting with `device`, in either direction.
  func neighbors(of device: DeviceID) -> [DeviceID]

  // Deliveries
  /// Records that `publication` is delivered to `subscription`; true if it is the first
  /// publication of that message for the subscription (a `found`).
  func addDelivery(
    subscription: SubscriptionID, publication: PublicationID, message: MessageKey
  ) -> Bool
  /// Removes the delivery; true if it was the last publication of that message for the
  /// subscription (a `lost`). False also when there was no such delivery.
  func removeDelivery(
    subscription: SubscriptionID, publication: PublicationID, message: MessageKey
  ) -> Bool
  func isDelivered(subscription: SubscriptionID, publication: PublicationID) -> Bool
  /// The subscriptions `publication` is delivered to.
  func deliveries(of publication: PublicationID) -> [SubscriptionID]
  /// The publications delivered to `subscription`, with their messages.
  func deliveries(to subscription: SubscriptionID) -> [(PublicationID, MessageKey)]

  // Deadlines
  func schedule(_ deadline: Deadline)
  /// Removes and returns the earliest deadline at or before `now`.
  func popDeadline(dueAt now: Date) -> Deadline?
  func nextDeadline() -> Date?

  /// How much the store holds.
  func counts() -> ResolutionCounts
}
