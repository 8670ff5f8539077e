public import Core

/// The part of a ``ResolutionStore`` that records which publications are delivered to which
/// subscriptions, indexed both ways.
public protocol DeliveryStore: AnyObject {
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
}
