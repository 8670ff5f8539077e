public import Core

/// The deliveries of an ``InMemoryResolutionStore``, indexed both ways.
///
/// Not thread-safe: it belongs to its store, which belongs to one engine.
public final class InMemoryDeliveryStore: DeliveryStore {
  private var deliveriesBySubscription: [SubscriptionID: [MessageKey: Set<PublicationID>]] = [:]
  private(set) var deliveriesByPublication: [PublicationID: Set<SubscriptionID>] = [:]

  init() {}

  public func addDelivery(
    subscription: SubscriptionID, publication: PublicationID, message: MessageKey
  ) -> Bool {
    guard deliveriesByPublication[publication, default: []].insert(subscription).inserted else {
      return false
    }
    let (inserted, _) = deliveriesBySubscription[subscription, default: [:]][
      message, default: []
    ].insert(publication)
    return inserted && deliveriesBySubscription[subscription]?[message]?.count == 1
  }

  public func removeDelivery(
    subscription: SubscriptionID, publication: PublicationID, message: MessageKey
  ) -> Bool {
    guard deliveriesByPublication[publication]?.remove(subscription) != nil else { return false }
    if deliveriesByPublication[publication]?.isEmpty == true {
      deliveriesByPublication[publication] = nil
    }
    guard deliveriesBySubscription[subscription]?[message]?.remove(publication) != nil else {
      return false
    }
    guard deliveriesBySubscription[subscription]?[message]?.isEmpty == true else { return false }
    deliveriesBySubscription[subscription]?[message] = nil
    if deliveriesBySubscription[subscription]?.isEmpty == true {
      deliveriesBySubscription[subscription] = nil
    }
    return true
  }

  public func isDelivered(subscription: SubscriptionID, publication: PublicationID) -> Bool {
    deliveriesByPublication[publication]?.contains(subscription) ?? false
  }

  public func deliveries(of publication: PublicationID) -> [SubscriptionID] {
    deliveriesByPublication[publication].map(Array.init) ?? []
  }

  public func deliveries(to subscription: SubscriptionID) -> [(PublicationID, MessageKey)] {
    guard let messages = deliveriesBySubscription[subscription] else { return [] }
    return messages.flatMap { key, publications in publications.map { ($0, key) } }
  }
}
