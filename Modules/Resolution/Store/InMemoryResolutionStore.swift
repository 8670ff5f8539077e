public import Core
public import Foundation
import HeapModule
public import Tokens

/// A ``ResolutionStore`` in memory: the in-process resolver's store, and the reference the
/// server's database stores are tested against.
///
/// Not thread-safe: it belongs to one engine, which belongs to one actor.
public final class InMemoryResolutionStore: ResolutionStore {
  private var devices: [DeviceID: DeviceRecord] = [:]
  private var tokens: [Token: (device: DeviceID, until: Date)] = [:]
  private var publicationsByID: [PublicationID: PublicationRecord] = [:]
  private var subscriptionsByID: [SubscriptionID: SubscriptionRecord] = [:]
  /// device → namespace → type → publications.
  private var publicationIndex: [DeviceID: [String: [String: Set<PublicationID>]]] = [:]
  /// device → namespace → type filter (`nil`: any type) → subscriptions.
  private var subscriptionIndex: [DeviceID: [String: [String?: Set<SubscriptionID>]]] = [:]
  /// device → how many publications / subscriptions it has (the handle limit's count).
  private var publicationCounts: [DeviceID: Int] = [:]
  private var subscriptionCounts: [DeviceID: Int] = [:]
  private var sightings: [ProximityKey: Date] = [:]
  /// device → neighbour → number of remembered sightings between the two.
  private var neighborCounts: [DeviceID: [DeviceID: Int]] = [:]
  private var deliveriesBySubscription: [SubscriptionID: [MessageKey: Set<PublicationID>]] = [:]
  private var deliveriesByPublication: [PublicationID: Set<SubscriptionID>] = [:]
  private var deadlines = Heap<Deadline>()

  public init() {}

  // MARK: Devices

  public func device(_ id: DeviceID) -> DeviceRecord? { devices[id] }
  public func saveDevice(_ device: DeviceRecord) { devices[device.id] = device }
  public func removeDevice(_ id: DeviceID) { devices[id] = nil }

  // MARK: Tokens

  public func bind(_ token: Token, to device: DeviceID, until: Date) {
    tokens[token] = (device, until)
  }
  public func silentDevices(before time: Date, limit: Int) -> [DeviceID] {
    // A scan: the in-process store holds one app's devices.
    devices.values.filter { $0.lastReportAt < time }.sorted { $0.lastReportAt < $1.lastReportAt }
      .prefix(max(limit, 0)).map(\.id)
  }

  public func device(heard token: Token, at time: Date) -> DeviceID? {
    guard let binding = tokens[token], binding.until > time else { return nil }
    return binding.device
  }

  public func binding(of token: Token) -> Date? { tokens[token]?.until }
  public func unbind(_ token: Token) { tokens[token] = nil }

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

  // MARK: Sightings

  public func lastSighting(_ key: ProximityKey) -> Date? { sightings[key] }

  public func recordSighting(_ key: ProximityKey, at time: Date) -> Date? {
    let previous = sightings.updateValue(time, forKey: key)
    if previous == nil {
      neighborCounts[key.hearer, default: [:]][key.heard, default: 0] += 1
      neighborCounts[key.heard, default: [:]][key.hearer, default: 0] += 1
    }
    return previous
  }

  public func removeSighting(_ key: ProximityKey) {
    guard sightings.removeValue(forKey: key) != nil else { return }
    decrementNeighbor(key.hearer, key.heard)
    decrementNeighbor(key.heard, key.hearer)
  }

  private func decrementNeighbor(_ device: DeviceID, _ neighbor: DeviceID) {
    guard let count = neighborCounts[device]?[neighbor] else { return }
    if count > 1 {
      neighborCounts[device]?[neighbor] = count - 1
    } else {
      neighborCounts[device]?[neighbor] = nil
      if neighborCounts[device]?.isEmpty == true { neighborCounts[device] = nil }
    }
  }

  public func neighbors(of device: DeviceID) -> [DeviceID] {
    neighborCounts[device].map { Array($0.keys) } ?? []
  }

  // MARK: Deliveries

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

  // MARK: Deadlines

  public func schedule(_ deadline: Deadline) { deadlines.insert(deadline) }

  public func popDeadline(dueAt now: Date) -> Deadline? {
    guard let first = deadlines.min, first.at <= now else { return nil }
    return deadlines.removeMin()
  }

  public func nextDeadline() -> Date? { deadlines.min?.at }

  // MARK: Counts

  public func counts() -> ResolutionCounts {
    var counts = ResolutionCounts()
    counts.devices = devices.count
    counts.tokens = tokens.count
    counts.publications = publicationsByID.count
    counts.subscriptions = subscriptionsByID.count
    counts.deliveries = deliveriesByPublication.values.reduce(0) { $0 + $1.count }
    counts.sightings = sightings.count
    counts.deadlines = deadlines.count
    return counts
  }
}
