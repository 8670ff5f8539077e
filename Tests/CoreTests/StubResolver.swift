@_spi(Resolver) import Core
import Synchronization
import Tokens

/// A resolver the test scripts: it answers reports with the events the test queued and pushes
/// stream events when told, so that ordering and failure paths can be driven exactly.
actor StubResolver: Resolver {
  private var revision: UInt64 = 0
  private var queuedAnswerEvents: [SequencedEvent] = []
  private var feed: EventFeed?
  private(set) var reports: [Report] = []
  let token = Token.random()
  let credentials = DeviceCredentials(id: .random(), secret: "s")
  var failReportsWith: ResolverError?

  func register(apiKey: String) async throws -> DeviceCredentials { credentials }

  func report(_ report: Report, from device: DeviceCredentials) async throws -> ReportAnswer {
    if let failReportsWith { throw failReportsWith }
    reports.append(report)
    revision += 1
    defer { queuedAnswerEvents = [] }
    return ReportAnswer(
      directives: Directives(
        revision: revision, token: token, tokenExpiresIn: 900, broadcast: .ble, scan: .ble),
      events: queuedAnswerEvents)
  }

  func events(for device: DeviceCredentials) async throws -> AsyncStream<SequencedEvent> {
    let feed = EventFeed()
    self.feed = feed
    return feed.stream
  }

  func unregister(_ device: DeviceCredentials) async throws { feed?.finish() }

  /// The next report's answer carries these events.
  func queueInNextAnswer(_ events: [SequencedEvent]) { queuedAnswerEvents = events }
  /// Sends an event on the stream now.
  func push(_ event: SequencedEvent) { feed?.yield(event) }
  /// Closes the stream, as a resolver that forgot the device would.
  func closeStream() { feed?.finish() }
  /// How many times the reader of the stream asked for an event: once it asks again after
  /// taking the last one pushed, it has done with that one.
  var eventRequests: Int { feed?.requests ?? 0 }
  func failReports(with error: ResolverError?) { failReportsWith = error }
}

/// A device's event stream that hands out one event per request of its reader and counts the
/// requests: the manager asks for the next event only after delivering (or holding) the last,
/// so a test can wait for that, not for a while.
final class EventFeed: Sendable {
  private struct State {
    var queue: [SequencedEvent] = []
    var waiter: CheckedContinuation<SequencedEvent?, Never>?
    var finished = false
    var requests = 0
  }
  private let state = Mutex(State())

  /// The stream to hand the manager; its reader's requests are counted.
  var stream: AsyncStream<SequencedEvent> {
    AsyncStream(unfolding: { [self] in await next() })
  }

  var requests: Int { state.withLock { $0.requests } }

  func yield(_ event: SequencedEvent) {
    let waiter = state.withLock { state -> CheckedContinuation<SequencedEvent?, Never>? in
      guard !state.finished else { return nil }
      guard let waiter = state.waiter else {
        state.queue.append(event)
        return nil
      }
      state.waiter = nil
      return waiter
    }
    waiter?.resume(returning: event)
  }

  func finish() {
    let waiter = state.withLock { state in
      state.finished = true
      defer { state.waiter = nil }
      return state.waiter
    }
    waiter?.resume(returning: nil)
  }

  /// The next event, waiting for one; nil once finished or when the reader is cancelled.
  private func next() async -> SequencedEvent? {
    await withTaskCancellationHandler {
      await withCheckedContinuation { (continuation: CheckedContinuation<SequencedEvent?, Never>) in
        let answer: SequencedEvent?? = state.withLock { state in
          state.requests += 1
          if !state.queue.isEmpty { return state.queue.removeFirst() }
          if state.finished || Task.isCancelled { return .some(nil) }
          state.waiter = continuation
          return nil
        }
        if let answer { continuation.resume(returning: answer) }
      }
    } onCancel: {
      finish()
    }
  }
}
