@_spi(Resolver) import Core
import Tokens

/// A resolver the test scripts: it answers reports with the events the test queued and pushes
/// stream events when told, so that ordering and failure paths can be driven exactly.
actor StubResolver: Resolver {
  private var revision: UInt64 = 0
  private var queuedAnswerEvents: [SequencedEvent] = []
  private var continuation: AsyncStream<SequencedEvent>.Continuation?
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
    let (stream, continuation) = AsyncStream.makeStream(of: SequencedEvent.self)
    self.continuation = continuation
    return stream
  }

  func unregister(_ device: DeviceCredentials) async throws { continuation?.finish() }

  /// The next report's answer carries these events.
  func queueInNextAnswer(_ events: [SequencedEvent]) { queuedAnswerEvents = events }
  /// Sends an event on the stream now.
  func push(_ event: SequencedEvent) { continuation?.yield(event) }
  /// Closes the stream, as a resolver that forgot the device would.
  func closeStream() { continuation?.finish() }
  func failReports(with error: ResolverError?) { failReportsWith = error }
}
