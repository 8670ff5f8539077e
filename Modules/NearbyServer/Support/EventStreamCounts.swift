import Synchronization

/// The device event streams open on this instance, counted by API key, client address and
/// project: the first two are capped (a client key ships in every app, so whoever extracts
/// one could otherwise register devices and open streams until the server's connection limit
/// is reached, as could one address), the last is what the console shows a project.
///
/// Called synchronously from any task; its counts are behind a `Mutex`. A stream holds a
/// ``Lease`` for as long as it is open; the lease gives its place back when it goes away.
final class EventStreamCounts: Sendable {
  private struct State {
    var byKey: [String: Int] = [:]
    var byAddress: [String: Int] = [:]
    var byProject: [String: Int] = [:]
  }

  let maximumPerKey: Int
  let maximumPerAddress: Int
  private let state = Mutex(State())

  init(maximumPerKey: Int, maximumPerAddress: Int) {
    self.maximumPerKey = maximumPerKey
    self.maximumPerAddress = maximumPerAddress
  }

  /// A place for a new stream of `key` from `address` in `project`.
  /// - Throws: 429 naming the cap when the key or the address holds its most.
  func open(key: String, address: String, project: String) throws -> Lease {
    try state.withLock { state in
      if state.byKey[key, default: 0] >= maximumPerKey {
        throw APIFailure.rateLimited(
          retryAfter: 10,
          subject: "event streams of this API key (\(maximumPerKey) open at once)")
      }
      if state.byAddress[address, default: 0] >= maximumPerAddress {
        throw APIFailure.rateLimited(
          retryAfter: 10,
          subject: "event streams from this address (\(maximumPerAddress) open at once)")
      }
      state.byKey[key, default: 0] += 1
      state.byAddress[address, default: 0] += 1
      state.byProject[project, default: 0] += 1
    }
    return Lease(counts: self, key: key, address: address, project: project)
  }

  /// The streams open for `project`.
  func open(project: String) -> Int { state.withLock { $0.byProject[project, default: 0] } }

  /// The streams open in all.
  var total: Int { state.withLock { $0.byProject.values.reduce(0, +) } }

  fileprivate func close(key: String, address: String, project: String) {
    state.withLock { state in
      func decrement(_ table: inout [String: Int], _ subject: String) {
        let left = table[subject, default: 1] - 1
        table[subject] = left > 0 ? left : nil
      }
      decrement(&state.byKey, key)
      decrement(&state.byAddress, address)
      decrement(&state.byProject, project)
    }
  }

  /// One open stream's place; given back on deinit.
  final class Lease: Sendable {
    private let counts: EventStreamCounts
    private let key: String
    private let address: String
    private let project: String

    fileprivate init(counts: EventStreamCounts, key: String, address: String, project: String) {
      (self.counts, self.key, self.address, self.project) = (counts, key, address, project)
    }

    deinit { counts.close(key: key, address: address, project: project) }
  }
}
