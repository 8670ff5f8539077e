public import Core
public import Foundation

/// The part of a ``ResolutionStore`` that remembers when each device last heard another, on
/// each medium, indexed by device pair.
public protocol ProximityStore: AnyObject {
  func lastSighting(_ key: ProximityKey) throws -> Date?
  /// Records a sighting; returns the previous time, if any.
  func recordSighting(_ key: ProximityKey, at time: Date) throws -> Date?
  func removeSighting(_ key: ProximityKey) throws
  /// Devices with at least one remembered sighting with `device`, in either direction.
  func neighbors(of device: DeviceID) throws -> [DeviceID]
}
