import Foundation
import Resolution

/// The Eddystone-EID index of each project, so resolving an observed EID costs a look-up, not
/// AES work per beacon. An index answers for a minute after it is built (it holds each
/// beacon's ids for that span); a project's index is dropped when this instance changes its
/// beacons, and another instance's changes are seen when the index runs out, within a minute.
actor EIDIndexCache {
  private var indexes: [String: EddystoneEIDIndex<String>] = [:]

  /// The project's index for `now`, built from `load` (name and parameters of each EID
  /// beacon) when there is none or it ran out.
  func index(
    project: String, now: Date,
    load: @Sendable () async throws -> [(name: String, registration: EddystoneEIDRegistration)]
  ) async throws -> EddystoneEIDIndex<String> {
    if let index = indexes[project], index.covers(now) { return index }
    let beacons = try await load().map { (beacon: $0.name, registration: $0.registration) }
    let index = EddystoneEIDIndex(beacons: beacons, at: now)
    indexes[project] = index
    return index
  }

  /// Forgets the project's index (its beacons changed).
  func invalidate(project: String) {
    indexes[project] = nil
  }
}
