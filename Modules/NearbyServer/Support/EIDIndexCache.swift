import Foundation
import Resolution

/// The Eddystone-EID index of each project, so resolving an observed EID costs a look-up, not
/// AES work per beacon. An index answers for a minute after it is built (it holds each
/// beacon's ids for that span); a change this instance makes to one beacon updates that
/// beacon in the index (``update(project:beacon:registration:)``: the AES work of one
/// beacon), so a project's index is built at most once a minute however its beacons change;
/// another instance's changes are seen when the index runs out, within a minute. Indexes are
/// built off the actor, so one project's build does not hold up the others.
///
/// Concurrent requests that find no index share one build; at most ``capacity`` projects are
/// kept (the least recently built go first).
actor EIDIndexCache {
  typealias Index = EddystoneEIDIndex<String>
  typealias Loader =
    @Sendable () async throws -> [(
      name: String, registration: EddystoneEIDRegistration
    )]

  let capacity: Int
  private var indexes: [String: Index] = [:]
  /// Bumped by ``invalidate(project:)``: a build that started before is not kept.
  private var generations: [String: UInt64] = [:]
  /// Builds in progress, by project: the generation each started in and its number.
  private var building: [String: (generation: UInt64, number: Int)] = [:]
  /// The requests waiting for each build in progress, by its number.
  private var waiting: [Int: [CheckedContinuation<Outcome, Never>]] = [:]

  /// How a build ended, as the requests that waited for it learn.
  private enum Outcome: Sendable {
    case built(Index)
    case failed(any Error)
    /// The request that ran it went away first (its client disconnected): whatever its
    /// error, the waiters look again, and one of them builds.
    case abandoned
  }

  init(capacity: Int = 1024) { self.capacity = capacity }

  /// The project's index for `now`, built from `load` (name and parameters of each EID
  /// beacon) when there is none or it ran out.
  func index(project: String, now: Date, load: @escaping Loader) async throws -> Index {
    while true {
      if let index = indexes[project], index.covers(now) { return index }
      let generation = generations[project, default: 0]
      guard let running = building[project], running.generation == generation else {
        return try await build(project: project, generation: generation, now: now, load: load)
      }
      let outcome = await withCheckedContinuation {
        waiting[running.number, default: []].append($0)
      }
      switch outcome {
      case .built(let index) where index.covers(now): return index
      case .failed(let error): throw error
      // Too old for `now`, or abandoned: look again (another waiter may be building by then).
      case .built, .abandoned: try Task.checkCancellation()
      }
    }
  }

  /// Builds the project's index in this request's task; requests that come meanwhile wait
  /// for it.
  private func build(
    project: String, generation: UInt64, now: Date, load: @escaping Loader
  ) async throws -> Index {
    builds += 1
    let number = builds
    building[project] = (generation, number)
    let result: Result<Index, any Error>
    do {
      result = .success(await Self.build(try await load(), now: now))
    } catch {
      result = .failure(error)
    }
    if building[project]?.number == number { building[project] = nil }
    let outcome: Outcome =
      switch result {
      case .success(let index): .built(index)
      case .failure where Task.isCancelled: .abandoned
      case .failure(let error): .failed(error)
      }
    for waiter in waiting.removeValue(forKey: number) ?? [] { waiter.resume(returning: outcome) }
    let index = try result.get()
    // Keep it unless the beacons changed meanwhile or a newer index is already there.
    if generations[project, default: 0] == generation,
      indexes[project].map({ $0.builtAt <= index.builtAt }) ?? true
    {
      indexes[project] = index
      evictIfNeeded()
    }
    return index
  }

  /// How many requests wait for a build under way (for tests and diagnostics).
  var waitingRequests: Int { waiting.values.reduce(0) { $0 + $1.count } }

  /// How many indexes were built (for tests and diagnostics).
  private(set) var builds = 0

  /// Forgets the project's index (its beacons changed).
  func invalidate(project: String) {
    indexes[project] = nil
    generations[project, default: 0] &+= 1
  }

  /// One beacon of the project changed: its ids in the index are replaced by those of
  /// `registration`, or removed (nil: deleted, or no longer served). A build under way read
  /// the beacons before the change, so it is not kept.
  func update(project: String, beacon: String, registration: EddystoneEIDRegistration?) {
    generations[project, default: 0] &+= 1
    // Out of the dictionary while it changes, so the index is not copied.
    guard var index = indexes.removeValue(forKey: project) else { return }
    index.update(beacon, registration: registration)
    indexes[project] = index
  }

  private func evictIfNeeded() {
    guard indexes.count > capacity else { return }
    let oldest = indexes.sorted { $0.value.builtAt < $1.value.builtAt }
      .prefix(indexes.count - capacity)
    for (project, _) in oldest { indexes[project] = nil }
  }

  /// The AES work, on the global executor (a nonisolated async function leaves the actor).
  private nonisolated static func build(
    _ beacons: [(name: String, registration: EddystoneEIDRegistration)], now: Date
  ) async -> Index {
    EddystoneEIDIndex(
      beacons: beacons.map { (beacon: $0.name, registration: $0.registration) }, at: now)
  }
}
