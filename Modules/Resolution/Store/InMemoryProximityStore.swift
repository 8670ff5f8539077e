public import Core
public import Foundation

/// The sightings of an ``InMemoryResolutionStore``, with each device's neighbours counted.
///
/// Not thread-safe: it belongs to its store, which belongs to one engine.
public final class InMemoryProximityStore: ProximityStore {
  private(set) var sightings: [ProximityKey: Date] = [:]
  /// device → neighbour → number of remembered sightings between the two.
  private var neighborCounts: [DeviceID: [DeviceID: Int]] = [:]

  init() {}

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
}
