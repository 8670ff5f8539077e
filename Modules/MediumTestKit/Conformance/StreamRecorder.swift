import Synchronization

/// Reads a stream in the background and keeps what arrived, so that checks can wait for an
/// element with a timeout or look at what came after a point in time.
final class StreamRecorder<Element: Sendable>: Sendable {
  private struct State {
    var elements: [(at: ContinuousClock.Instant, element: Element)] = []
    var finished = false
  }
  /// Shared with the reading task; the mutex guards the elements.
  private final class Storage: Sendable {
    let state = Mutex(State())
  }
  private let storage = Storage()
  private let reader: Task<Void, Never>

  init(_ stream: AsyncStream<Element>) {
    let storage = storage
    reader = Task {
      for await element in stream {
        storage.state.withLock { $0.elements.append((ContinuousClock.now, element)) }
      }
      storage.state.withLock { $0.finished = true }
    }
  }

  deinit { reader.cancel() }

  /// Whether the stream has finished.
  var isFinished: Bool { storage.state.withLock { $0.finished } }

  /// The elements that arrived at or after `instant`.
  func elements(since instant: ContinuousClock.Instant) -> [Element] {
    storage.state.withLock { $0.elements.filter { $0.at >= instant }.map(\.element) }
  }

  /// Waits until an element that arrived at or after `instant` satisfies `predicate`,
  /// polling every 10 ms, for at most `timeout`.
  func wait(
    since instant: ContinuousClock.Instant, timeout: Duration,
    for predicate: (Element) -> Bool
  ) async -> Element? {
    let deadline = ContinuousClock.now + timeout
    while ContinuousClock.now < deadline {
      if let found = elements(since: instant).first(where: predicate) { return found }
      try? await Task.sleep(for: .milliseconds(10))
    }
    return elements(since: instant).first(where: predicate)
  }

  /// Waits, for at most `timeout`, until the stream finishes.
  func waitUntilFinished(timeout: Duration) async -> Bool {
    let deadline = ContinuousClock.now + timeout
    while ContinuousClock.now < deadline {
      if isFinished { return true }
      try? await Task.sleep(for: .milliseconds(10))
    }
    return isFinished
  }
}
