import Foundation

/// Which beacon observations this instance writes: a beacon's last observation at most once
/// per ``interval`` (so that `getforobserved`, the hot path of beacon apps, stays a read for
/// beacons seen a moment ago), telemetry every time (clients forward it once per look-up).
///
/// Per instance and in memory: after a restart, or on another instance, a beacon's first
/// observation is written again. At most ``capacity`` beacons are remembered (the oldest
/// writes are forgotten first, which only means writing them again).
actor ObservationThrottle {
  let interval: TimeInterval
  let capacity: Int
  private var written: [Key: Date] = [:]

  private struct Key: Hashable {
    var project: String
    var beacon: String
  }

  init(interval: TimeInterval = 60, capacity: Int = 100_000) {
    self.interval = interval
    self.capacity = capacity
  }

  /// The beacons among `beacons` whose observation at `now` is to be written (the caller
  /// also writes those with telemetry), noted as written.
  func admit(project: String, beacons: [String], now: Date) -> [String] {
    var admitted: [String] = []
    for beacon in beacons {
      let key = Key(project: project, beacon: beacon)
      if let last = written[key], now.timeIntervalSince(last) < interval, last <= now {
        continue
      }
      written[key] = now
      admitted.append(beacon)
    }
    if written.count > capacity {
      written = written.filter { now.timeIntervalSince($0.value) < interval }
      if written.count > capacity { written = [:] }
    }
    return admitted
  }
}
