/// A ``ResolutionStore`` in memory: the in-process resolver's store, and the reference the
/// server's database stores are tested against.
///
/// Not thread-safe: it belongs to one engine, which belongs to one actor.
public final class InMemoryResolutionStore: ResolutionStore {
  public let devices = InMemoryDeviceStore()
  public let handles = InMemoryHandleStore()
  public let proximity = InMemoryProximityStore()
  public let deliveries = InMemoryDeliveryStore()
  public let deadlines = InMemoryDeadlineStore()

  public init() {}

  public func counts() -> ResolutionCounts {
    var counts = ResolutionCounts()
    counts.devices = devices.devices.count
    counts.tokens = devices.tokens.count
    counts.publications = handles.publicationsByID.count
    counts.subscriptions = handles.subscriptionsByID.count
    counts.deliveries = deliveries.deliveriesByPublication.values.reduce(0) { $0 + $1.count }
    counts.sightings = proximity.sightings.count
    counts.deadlines = deadlines.deadlines.count
    return counts
  }
}
