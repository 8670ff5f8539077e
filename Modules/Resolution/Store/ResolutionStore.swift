/// Where the resolution engine keeps its state: one store of each kind, shared by the
/// engine's calls for as long as the store lives (the in-process resolver's life, or one
/// database transaction on the server).
///
/// The engine calls its store from one isolation domain or thread at a time (the in-process
/// resolver's actor, or one database transaction on the server's storage thread), so calls are
/// synchronous. They throw when the storage fails (a database error); the engine passes the
/// error on and the caller abandons the transaction.
///
/// The in-memory store is ``InMemoryResolutionStore``. Every implementation keeps the
/// indexes the engine relies on: handles by device and by (namespace, type), sightings by
/// device pair, deliveries both ways, and deadlines by time. Its parts are objects that live
/// as long as the store: what one part reads, the others may keep (a transaction's caches).
public protocol ResolutionStore: AnyObject {
  /// The store of devices and their tokens.
  associatedtype Devices: DeviceStore
  /// The store of publications and subscriptions.
  associatedtype Handles: HandleStore
  /// The store of sightings.
  associatedtype Proximity: ProximityStore
  /// The store of deliveries.
  associatedtype Deliveries: DeliveryStore
  /// The store of deadlines.
  associatedtype Deadlines: DeadlineStore

  /// Devices, with the tokens that resolve to them.
  var devices: Devices { get }
  /// Publications and subscriptions, with the queries the engine matches them by.
  var handles: Handles { get }
  /// When each device last heard another, on each medium.
  var proximity: Proximity { get }
  /// Which publications are delivered to which subscriptions.
  var deliveries: Deliveries { get }
  /// The engine's deadlines, by time.
  var deadlines: Deadlines { get }

  /// How much the store holds.
  func counts() throws -> ResolutionCounts
}
