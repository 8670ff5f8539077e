import Foundation
import Resolution

/// The Eddystone-EID index of each project, so resolving an observed EID costs a look-up, not
/// AES work per beacon. An index answers for a minute after it is built (it holds each
/// beacon's ids for that span); a project's index is dropped when this instance changes its
/// beacons, and another instance's changes are seen when the index runs out, within a minute.
/// Indexes are built off the actor, so one project's build does not hold up the others.
actor EIDIndexCache {
  private var indexes: [String: EddystoneEIDIndex<String>] = [:]
  /// Bumped by ``invalidate(project:)``: a build that started before is not kept.
  private var generations: [String: UInt64] = [:]

  /// The project's index for `now`, built from `load` (name and parameters of each EID
  /// beacon) when there is none or it ran out.
  func index(
    project: String, now: Date,
    load: @Sendable () async throws -> [(name: String, registration: EddystoneEIDRegistration)]
  ) async throws -> EddystoneEIDIndex<String> {
    if let index = indexes[project], index.covers(now) { return index }
    let generation = generations[project, default: 0]
    let index = await Self.build(try await load(), now: now)
    if generations[project, default: 0] == generation { indexes[project] = index }
    return index
  }

  /// Forgets the project's index (its beacons changed).
  func invalidate(project: String) {
    indexes[project] = nil
    generations[project, default: 0] &+= 1
  }

  /// The AES work, on the global executor (a nonisolated async function leaves the actor).
  private nonisolated static func build(
    _ beacons: [(name: String, registration: EddystoneEIDRegistration)], now: Date
  ) async -> EddystoneEIDIndex<String> {
    EddystoneEIDIndex(
      beacons: beacons.map { (beacon: $0.name, registration: $0.registration) }, at: now)
  }
}
