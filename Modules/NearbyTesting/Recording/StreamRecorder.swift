import Synchronization

/// Reads a stream in the background and keeps what arrived, with the time, so that tests can
/// wait for an element with a deadline instead of awaiting a stream that may never yield.
public final class StreamRecorder<Element: Sendable>: Sendable {
  private struct State {
    var elements: [(at: ContinuousClock.Instant, element: Element)] = []
    var finished = false
  }
  /// Shared with the reading task; the mutex guards the elements, the signal wakes the waits
  /// at each arrival.
  private final class Storage: Sendable {
    let state = Mutex(State())
    let signal = ChangeSignal()
  }
  private let storage = Storage()
  private let reader: Task<Void, Never>

  /// Starts reading `stream` (this recorder becomes its one reader).
  public convenience init(_ stream: AsyncStream<Element>) {
    self.init(sequence: stream)
  }

  /// Starts reading `sequence` (this recorder becomes its one reader), such as a
  /// subscription's `events`, which the reader then keeps alive until the recorder goes away.
  public convenience init<Sequence: AsyncSequence<Element, Never> & Sendable>(
    _ sequence: Sequence
  ) {
    self.init(sequence: sequence)
  }

  private init<Sequence: AsyncSequence<Element, Never> & Sendable>(sequence: Sequence) {
    let storage = storage
    reader = Task {
      for await element in sequence {
        storage.state.withLock { $0.elements.append((ContinuousClock.now, element)) }
        storage.signal.changed()
      }
      storage.state.withLock { $0.finished = true }
      storage.signal.changed()
    }
  }

  deinit { reader.cancel() }

  /// Everything that arrived so far.
  public var elements: [Element] { storage.state.withLock { $0.elements.map(\.element) } }

  /// Whether the stream has finished.
  public var isFinished: Bool { storage.state.withLock { $0.finished } }

  /// The elements that arrived at or after `instant`.
  public func elements(since instant: ContinuousClock.Instant) -> [Element] {
    storage.state.withLock { $0.elements.filter { $0.at >= instant }.map(\.element) }
  }

  /// Waits until `condition` holds for the elements that arrived, asking it now and at each
  /// arrival, for at most `timeout`; returns whether it held.
  public func until(
    timeout: Duration = defaultWaitBound, _ condition: ([Element]) throws -> Bool
  ) async rethrows -> Bool {
    try await storage.signal.wait(timeout: timeout) { try condition(elements) }
  }

  /// Waits, for at most `timeout`, until an element that arrived at or after `instant`
  /// (default: ever) satisfies `predicate`; returns it.
  public func first(
    since instant: ContinuousClock.Instant? = nil, timeout: Duration = defaultWaitBound,
    where predicate: (Element) -> Bool = { _ in true }
  ) async -> Element? {
    var found: Element?
    _ = await storage.signal.wait(timeout: timeout) {
      found = (instant.map { elements(since: $0) } ?? elements).first(where: predicate)
      return found != nil
    }
    return found
  }

  /// Waits, for at most `timeout`, until `count` elements have arrived; returns them all.
  public func waitForCount(_ count: Int, timeout: Duration = defaultWaitBound) async -> [Element] {
    _ = await until(timeout: timeout) { $0.count >= count }
    return elements
  }

  /// Waits, for at most `timeout`, until the stream finishes.
  public func waitUntilFinished(timeout: Duration = defaultWaitBound) async -> Bool {
    await storage.signal.wait(timeout: timeout) { isFinished }
  }
}
