public import Core

/// The publications and subscriptions of an ``InMemoryResolutionStore``, indexed by device and
/// by (namespace, type), with a count per device for the handle limit.
///
/// Not thread-safe: it belongs to its store, which belongs to one engine.
public final class InMemoryHandleStore: HandleStore {
  private(set) var publicationsByID: [PublicationID: PublicationRecord] = [:]
  private(set) var subscriptionsByID: [SubscriptionID: SubscriptionRecord] = [:]
  /// device → namespace → type → publications.
  private var publicationIndex: [DeviceID: [String: [String: Set<PublicationID>]]] = [:]
  /// device → namespace → type filter (`nil`: any type) → subscriptions.
  private var subscriptionIndex: [DeviceID: [String: [String?: Set<SubscriptionID>]]] = [:]
  /// device → how many publications / subscriptions it has (the handle limit's count).
  private var publicationCounts: [DeviceID: Int] = [:]
  private var subscriptionCounts: [DeviceID: Int] = [:]

  init() {}

  // MARK: Publications

  public func publication(_ id: PublicationID) -> PublicationRecord? { publicationsByID[id] }

  public func savePublication(_ publication: PublicationRecord) {
    if let old = publicationsByID[publication.id] { unindex(old) }
    publicationsByID[publication.id] = publication
    publicationCounts[publication.device, default: 0] += 1
    publicationIndex[publication.device, default: [:]][
      publication.message.namespace, default: [:]][
        publication.message.type, default: []
      ].insert(publication.id)
  }

  public func removePublication(_ id: PublicationID) -> PublicationRecord? {
    guard let record = publicationsByID.removeValue(forKey: id) else { return nil }
    unindex(record)
    return record
  }

  private func unindex(_ publication: PublicationRecord) {
    let (device, namespace, type) =
      (publication.device, publication.message.namespace, publication.message.type)
    publicationCounts[device, default: 1] -= 1
    if publicationCounts[device] == 0 { publicationCounts[device] = nil }
    publicationIndex[device]?[namespace]?[type]?.remove(publication.id)
    if publicationIndex[device]?[namespace]?[type]?.isEmpty == true {
      publicationIndex[device]?[namespace]?[type] = nil
    }
    if publicationIndex[device]?[namespace]?.isEmpty == true {
      publicationIndex[device]?[namespace] = nil
    }
    if publicationIndex[device]?.isEmpty == true { publicationIndex[device] = nil }
  }

  public func publications(on device: DeviceID) -> [PublicationRecord] {
    guard let namespaces = publicationIndex[device] else { return [] }
    var result: [PublicationRecord] = []
    for types in namespaces.values {
      for ids in types.values {
        for id in ids {
          if let record = publicationsByID[id] { result.append(record) }
        }
      }
    }
    return result
  }

  public func publicationTally(on device: DeviceID, among ids: Set<PublicationID>)
    -> HandleTally<PublicationID>
  {
    HandleTally(
      count: publicationCounts[device] ?? 0,
      present: ids.filter { publicationsByID[$0]?.device == device })
  }

  public func publications(on device: DeviceID, acceptedBy subscription: SubscriptionRecord)
    -> [PublicationRecord]
  {
    guard let types = publicationIndex[device]?[subscription.namespace] else { return [] }
    if let type = subscription.type {
      return types[type]?.compactMap { publicationsByID[$0] } ?? []
    }
    return types.values.flatMap { $0.compactMap { publicationsByID[$0] } }
  }

  // MARK: Subscriptions

  public func subscription(_ id: SubscriptionID) -> SubscriptionRecord? { subscriptionsByID[id] }

  public func saveSubscription(_ subscription: SubscriptionRecord) {
    if let old = subscriptionsByID[subscription.id] { unindex(old) }
    subscriptionsByID[subscription.id] = subscription
    subscriptionCounts[subscription.device, default: 0] += 1
    subscriptionIndex[subscription.device, default: [:]][
      subscription.namespace, default: [:]][
        subscription.type, default: []
      ].insert(subscription.id)
  }

  public func removeSubscription(_ id: SubscriptionID) -> SubscriptionRecord? {
    guard let record = subscriptionsByID.removeValue(forKey: id) else { return nil }
    unindex(record)
    return record
  }

  private func unindex(_ subscription: SubscriptionRecord) {
    let (device, namespace, type) = (subscription.device, subscription.namespace, subscription.type)
    subscriptionCounts[device, default: 1] -= 1
    if subscriptionCounts[device] == 0 { subscriptionCounts[device] = nil }
    subscriptionIndex[device]?[namespace]?[type]?.remove(subscription.id)
    if subscriptionIndex[device]?[namespace]?[type]?.isEmpty == true {
      subscriptionIndex[device]?[namespace]?[type] = nil
    }
    if subscriptionIndex[device]?[namespace]?.isEmpty == true {
      subscriptionIndex[device]?[namespace] = nil
    }
    if subscriptionIndex[device]?.isEmpty == true { subscriptionIndex[device] = nil }
  }

  public func subscriptions(on device: DeviceID) -> [SubscriptionRecord] {
    guard let namespaces = subscriptionIndex[device] else { return [] }
    return namespaces.values.flatMap {
      $0.values.flatMap { $0.compactMap { subscriptionsByID[$0] } }
    }
  }

  public func subscriptionTally(on device: DeviceID, among ids: Set<SubscriptionID>)
    -> HandleTally<SubscriptionID>
  {
    HandleTally(
      count: subscriptionCounts[device] ?? 0,
      present: ids.filter { subscriptionsByID[$0]?.device == device })
  }

  public func subscriptions(on device: DeviceID, accepting publication: PublicationRecord)
    -> [SubscriptionRecord]
  {
    guard let types = subscriptionIndex[device]?[publication.message.namespace] else { return [] }
    // The subscriptions for exactly this type, then those for every type.
    var result: [SubscriptionRecord] = []
    for id in types[publication.message.type] ?? [] {
      if let record = subscriptionsByID[id] { result.append(record) }
    }
    for id in types[nil] ?? [] {
      if let record = subscriptionsByID[id] { result.append(record) }
    }
    return result
  }
}
