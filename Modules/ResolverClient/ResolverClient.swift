import AsyncHTTPClient
@_spi(Resolver) public import Core
public import Foundation
public import Logging
import NIOCore
import OpenAPIAsyncHTTPClient
import OpenAPIRuntime
import ResolverAPI
@_spi(Resolver) import ResolverWire

/// The client of the resolver server (`nearby server`): a `Resolver` (of Core) over its HTTP API.
///
/// - Registers once per manager; credentials are kept in a ``CredentialStore`` so a device
///   left behind by a crashed process is unregistered at the next start (its publications do
///   not linger until they expire).
/// - Reports go out at once; when the server cannot be reached, the report's sightings
///   (bounded, oldest dropped with a logged count) and its unpublish/unsubscribe requests are
///   kept and sent with the next report, or on their own once the server answers again.
/// - The event stream stays open and reconnects with backoff, resuming after the last event
///   it received (`Last-Event-ID`), so nothing is lost across reconnects or server restarts.
///
/// All state is in this actor; HTTP runs on AsyncHTTPClient's event loops.
public actor ResolverClient {
  /// How the client connects.
  public struct Configuration: Sendable {
    /// The server's base URL, e.g. `http://127.0.0.1:7171`.
    public var url: URL
    /// Where device credentials are kept between runs.
    public var credentialStore: any CredentialStore
    /// The longest a request may take.
    public var requestTimeout: Duration = .seconds(10)
    /// The longest the event stream may stay silent (the server sends a keepalive every
    /// 15 s) before the client reconnects.
    public var streamIdleTimeout: Duration = .seconds(45)
    /// The most sightings kept while the server is unreachable.
    public var pendingSightingsCapacity = 16_384
    /// Delays between reconnection attempts (doubling, with jitter). A `429` answer's
    /// `Retry-After` is waited out in full before the next call (capped at
    /// ``maximumRetryAfter``).
    public var initialBackoff: Duration = .milliseconds(250)
    public var maximumBackoff: Duration = .seconds(30)
    /// The longest `Retry-After` honoured: a server cannot silence the client for longer.
    public var maximumRetryAfter: Duration = .seconds(600)
    /// Sends the API key and the device secret over plain `http://` to a host that is not
    /// loopback (`127.0.0.0/8`, `::1`, `localhost`). Off by default: registration with such a
    /// URL is refused (`ResolverError.unavailable` saying so), since anyone on the
    /// path could read them. Use `https://`, or turn this on for a network you trust.
    public var allowsInsecureHTTP = false
    /// The largest answer the client reads (16 MiB); a larger one is an error.
    public var maximumResponseBytes = 16 << 20
    /// The largest event the client reads from the event stream (1 MiB; a message is at
    /// most 100 KiB); a larger one ends the connection, which is made again.
    public var maximumEventBytes = 1 << 20
    public var logger = Logger(label: "nearby.server-client")
    /// The clock of the client's waits: a `429`'s `Retry-After` and the backoff between
    /// attempts. Default: `ContinuousClock()`; tests give a manual clock. Request timeouts
    /// stay on the HTTP client's own (wall) clock.
    public var clock: any Clock<Duration> = ContinuousClock()

    public init(url: URL, credentialStore: any CredentialStore = FileCredentialStore()) {
      self.url = url
      self.credentialStore = credentialStore
    }
  }

  public let configuration: Configuration
  let logger: Logger
  private let http: HTTPClient
  /// The transport of ordinary calls (`requestTimeout`) and the event stream's (no timeout).
  private let transport: AsyncHTTPClientTransport
  private let streamTransport: AsyncHTTPClientTransport
  private var apiKey = ""
  private var account = ""
  var pending: PendingReport
  /// The flush of pending reports and the event stream's follower run here; ended when the
  /// device is unregistered or the client released.
  let work = WorkGroup()
  /// Whether a flush of pending reports runs (one at a time).
  var flushRuns = false
  var eventContinuation: AsyncStream<SequencedEvent>.Continuation?
  /// The number of the event stream that is current: a follower of an older one (replaced by
  /// a new ``events(for:)``) stops at its next event or reconnection.
  var streamNumber = 0
  /// The newest event sequence received on the stream (`Last-Event-ID` when reconnecting).
  var lastStreamedSequence: UInt64 = 0
  /// No call before this (a `429`'s `Retry-After`).
  var retryNotBefore: NearbyClock.Instant?
  var isClosed = false
  /// ``Configuration/clock``, read as instants.
  let clock: NearbyClock

  public init(configuration: Configuration) {
    self.configuration = configuration
    logger = configuration.logger
    clock = NearbyClock(configuration.clock)
    let read = TimeAmount.nanoseconds(
      Int64(configuration.streamIdleTimeout.components.seconds) * 1_000_000_000)
    // Redirects are not followed: every request carries the API key and most the device
    // secret, which must not go to a host the app was not configured for.
    http = HTTPClient(
      eventLoopGroup: HTTPClient.defaultEventLoopGroup,
      configuration: .init(
        redirectConfiguration: .disallow, timeout: .init(connect: .seconds(5), read: read)))
    let timeout = TimeAmount.nanoseconds(
      Int64(configuration.requestTimeout.components.seconds) * 1_000_000_000
        + configuration.requestTimeout.components.attoseconds / 1_000_000_000)
    transport = AsyncHTTPClientTransport(configuration: .init(client: http, timeout: timeout))
    streamTransport = AsyncHTTPClientTransport(
      configuration: .init(client: http, timeout: .hours(24 * 365)))
    pending = PendingReport(capacity: configuration.pendingSightingsCapacity)
  }

  deinit {
    work.end()
    eventContinuation?.finish()
    // The client's own shutdown, which needs no task: it calls back when done (nothing to do).
    http.shutdown { _ in }
  }

  // MARK: Resolver

  @_spi(Resolver) public func register(apiKey: String) async throws -> DeviceCredentials {
    guard !apiKey.isEmpty else { throw ResolverError.invalidAPIKey }
    if let refusal = configuration.insecureURLRefusal {
      throw ResolverError.unavailable(refusal)
    }
    self.apiKey = apiKey
    account = "\(configuration.url.absoluteString)|\(apiKey)"
    if let leftover = await configuration.credentialStore.claim(account) {
      // A previous process did not unregister (it crashed): clean up after it.
      try? await unregisterOnServer(leftover)
      await configuration.credentialStore.forget(account)
      logger.info("unregistered a device left behind", metadata: ["device": "\(leftover.id)"])
    }
    let output = try await call(secret: nil) { try await $0.registerDevice() }
    let credentials: DeviceCredentials
    switch output {
    case .created(let created):
      let wire = try created.body.json
      guard let id = DeviceID(wire.id) else {
        throw ResolverError.unavailable("the server answered a malformed device id \(wire.id)")
      }
      credentials = DeviceCredentials(id: id, secret: wire.secret)
    case .unauthorized(let answer): throw ResolverError.invalidAPIKey.logged(answer, logger)
    case .unprocessableContent(let answer):
      throw ResolverError.unavailable("the server refused a new device: \(Self.message(answer))")
    case .tooManyRequests(let answer):
      throw ResolverError.unavailable("rate limited: \(Self.message(answer))")
    case .undocumented(let status, _):
      throw ResolverError.unavailable("the server answered \(status) to register")
    }
    await configuration.credentialStore.save(credentials, for: account)
    logger.debug("device registered", metadata: ["device": "\(credentials.id)"])
    return credentials
  }

  @_spi(Resolver) public func report(_ report: Report, from device: DeviceCredentials) async throws
    -> ReportAnswer
  {
    let outgoing = pending.merged(into: report)
    do {
      let answer = try await send(outgoing, from: device)
      // More was kept than one report carries: the rest follows without waiting for the app.
      if !pending.isEmpty { schedulePendingFlush(from: device) }
      return answer
    } catch let error as ResolverError {
      if case .unavailable = error { keepForLater(outgoing, from: device) }
      throw error
    }
  }

  @_spi(Resolver) public func events(for device: DeviceCredentials) async throws -> AsyncStream<
    SequencedEvent
  > {
    eventContinuation?.finish()
    // Unbounded, like the in-process resolver's: events must not be dropped, and the manager
    // reads them at once.
    let (stream, continuation) = AsyncStream.makeStream(
      of: SequencedEvent.self, bufferingPolicy: .unbounded)
    eventContinuation = continuation
    streamNumber += 1
    let number = streamNumber
    work.start { [weak self] in
      await self?.followEvents(of: device, stream: number, into: continuation)
    }
    return stream
  }

  @_spi(Resolver) public func unregister(_ device: DeviceCredentials) async throws {
    isClosed = true
    work.end()
    eventContinuation?.finish()
    eventContinuation = nil
    defer { http.shutdown { _ in } }
    try await unregisterOnServer(device)
    await configuration.credentialStore.forget(account)
  }

  /// The registered beacons of the API key's project that `observed` belong to, with their
  /// attachments matching `namespacedTypes`, from `beaconinfo:getforobserved` (in batches of
  /// ``maximumObservationsPerRequest``). Each answer carries the observed id it was found by.
  /// - Throws: `ResolverError.invalidAPIKey` for a refused key,
  ///   `ResolverError.invalidReport(_:)` for input the server refuses (the message names
  ///   it), `ResolverError.unavailable(_:)` when the server cannot be reached.
  @_spi(Resolver) public func beaconInfo(
    for observed: [BeaconID], namespacedTypes: [String], from device: DeviceCredentials
  ) async throws -> [BeaconInfo] {
    try await beaconInfo(
      observations: observed.map { BeaconObservation(id: $0) }, namespacedTypes: namespacedTypes,
      from: device)
  }

  /// ``beaconInfo(for:namespacedTypes:from:)`` with the telemetry heard with each observation,
  /// which the server keeps as the beacon's latest (its diagnostics, for the project's admins).
  /// - Throws: as ``beaconInfo(for:namespacedTypes:from:)``.
  @_spi(Resolver) public func beaconInfo(
    observations: [BeaconObservation], namespacedTypes: [String], from device: DeviceCredentials
  ) async throws -> [BeaconInfo] {
    var answers: [BeaconInfo] = []
    var start = 0
    while start < observations.count {
      let batch = Array(
        observations[
          start..<min(start + Self.maximumObservationsPerRequest, observations.count)])
      answers += try await beaconInfoBatch(batch, namespacedTypes: namespacedTypes)
      start += batch.count
    }
    return answers
  }

  /// The most observations `beaconinfo:getforobserved` takes in one request.
  public static let maximumObservationsPerRequest = ResolverContract.maximumObservations

  private func beaconInfoBatch(
    _ observations: [BeaconObservation], namespacedTypes: [String]
  ) async throws -> [BeaconInfo] {
    let observed = observations.map(\.id)
    let body = Components.Schemas.GetForObservedRequest(
      observations: observations.map {
        .init(
          advertisedId: .init($0.id), telemetry: $0.telemetry.map(StrictBase64.encode))
      },
      namespacedTypes: namespacedTypes)
    let output = try await call(secret: nil) { try await $0.getForObserved(body: .json(body)) }
    let beacons: [Components.Schemas.Beacon]
    switch output {
    case .ok(let ok): beacons = try ok.body.json.beacons
    case .badRequest(let answer): throw ResolverError.invalidReport(Self.message(answer))
    case .unprocessableContent(let answer): throw ResolverError.invalidReport(Self.message(answer))
    case .contentTooLarge(let answer): throw ResolverError.invalidReport(Self.message(answer))
    case .unauthorized(let answer): throw ResolverError.invalidAPIKey.logged(answer, logger)
    case .tooManyRequests(let answer):
      throw ResolverError.unavailable("rate limited: \(Self.message(answer))")
    case .undocumented(let status, _):
      throw ResolverError.unavailable("the server answered \(status) to beaconinfo:getforobserved")
    }
    var answers: [BeaconInfo] = []
    do {
      for beacon in beacons {
        // A server without `observedId` answers the registered id, which is the observed one
        // for every kind but Eddystone-EID.
        let id = try (beacon.observedId ?? beacon.advertisedId).beaconID(field: "observedId")
        guard observed.contains(id) else { continue }
        answers.append(try beacon.beaconInfo(observed: id))
      }
    } catch {
      throw ResolverError.unavailable("the server answered a malformed beacon: \(error)")
    }
    return answers
  }

  // MARK: Sending

  func send(_ report: Report, from device: DeviceCredentials) async throws -> ReportAnswer {
    let body = Components.Schemas.Report(report)
    let output = try await call(secret: device.secret) {
      // When it leaves (each try): the server judges the sightings' times against it, so the
      // two clocks need not agree.
      var sent = body
      sent.sentAt = Date()
      return try await $0.report(path: .init(id: device.id.description), body: .json(sent))
    }
    switch output {
    case .ok(let ok):
      do { return try ok.body.json.answer() } catch let error as WireError {
        throw ResolverError.unavailable("the server answered a malformed report answer: \(error)")
      }
    case .badRequest(let answer): throw ResolverError.invalidReport(Self.message(answer))
    case .unprocessableContent(let answer): throw ResolverError.invalidReport(Self.message(answer))
    case .contentTooLarge(let answer): throw ResolverError.invalidReport(Self.message(answer))
    case .unauthorized(let answer): throw ResolverError.invalidAPIKey.logged(answer, logger)
    case .forbidden: throw ResolverError.wrongSecret(device.id)
    case .notFound: throw ResolverError.unknownDevice(device.id)
    case .tooManyRequests(let answer):
      throw ResolverError.unavailable("rate limited: \(Self.message(answer))")
    case .undocumented(let status, _):
      throw ResolverError.unavailable("the server answered \(status) to a report")
    }
  }

  private func unregisterOnServer(_ device: DeviceCredentials) async throws {
    let output = try await call(secret: device.secret) {
      try await $0.unregisterDevice(path: .init(id: device.id.description))
    }
    switch output {
    case .noContent: return
    case .badRequest(let answer): throw ResolverError.invalidReport(Self.message(answer))
    case .notFound: throw ResolverError.unknownDevice(device.id)
    case .forbidden: throw ResolverError.wrongSecret(device.id)
    case .unauthorized: throw ResolverError.invalidAPIKey
    case .tooManyRequests(let answer):
      throw ResolverError.unavailable("rate limited: \(Self.message(answer))")
    case .undocumented(let status, _):
      throw ResolverError.unavailable("the server answered \(status) to unregister")
    }
  }

  // MARK: Calls

  /// Runs a call with the authentication headers; transport failures become
  /// ``Core/ResolverError/unavailable(_:)``.
  ///
  /// The headers reach the request through a client made for this one call, whose
  /// middleware holds them (a client is a few references: cheap to make). Not through a
  /// task-local value: see docs/design.md, "The release-build crash".
  func call<Output>(
    secret: String?, stream: Bool = false,
    _ body: @Sendable (Client) async throws -> Output
  ) async throws -> Output {
    if let notBefore = retryNotBefore {
      let wait = clock.now.duration(to: notBefore)
      guard wait <= .zero else {
        throw ResolverError.unavailable(
          "rate limited: the server asked to wait \(Int(wait.components.seconds) + 1) s more")
      }
      retryNotBefore = nil
    }
    let client = Client(
      serverURL: configuration.url,
      configuration: .nearby,
      transport: stream ? streamTransport : transport,
      middlewares: [
        ResponseLimitMiddleware(
          limit: stream
            ? .event(configuration.maximumEventBytes) : .body(configuration.maximumResponseBytes)),
        RetryAfterMiddleware(record: { [weak self] seconds in
          await self?.rateLimited(retryAfter: seconds)
        }),
        AuthenticationMiddleware(
          authentication: RequestAuthentication(apiKey: apiKey, deviceSecret: secret)),
      ])
    do {
      return try await body(client)
    } catch let error as ResolverError {
      throw error
    } catch let error as ClientError {
      throw ResolverError.unavailable("\(configuration.url): \(error.underlyingError)")
    } catch {
      throw ResolverError.unavailable("\(configuration.url): \(error)")
    }
  }

  /// Remembers a `429`'s `Retry-After`: no call goes out before it has passed.
  func rateLimited(retryAfter seconds: Int) {
    let wait = min(Duration.seconds(max(seconds, 1)), configuration.maximumRetryAfter)
    let until = clock.now.advanced(by: wait)
    retryNotBefore = max(retryNotBefore ?? until, until)
    logger.notice("rate limited by the server", metadata: ["retry after": "\(wait)"])
  }

  /// How long until calls may go out again (zero when they may now).
  var retryDelay: Duration {
    guard let retryNotBefore else { return .zero }
    return max(clock.now.duration(to: retryNotBefore), .zero)
  }

}

extension ResolverClient.Configuration {
  /// Why registration refuses ``url``: plain `http://` to a host that is not loopback, unless
  /// ``allowsInsecureHTTP``; nil when it is accepted.
  public var insecureURLRefusal: String? {
    guard !allowsInsecureHTTP, url.scheme?.lowercased() == "http" else { return nil }
    let host = (url.host ?? "").lowercased().trimmingCharacters(
      in: CharacterSet(charactersIn: "[]"))
    let loopback =
      host == "localhost" || host == "::1" || host.hasSuffix(".localhost")
      || (host.hasPrefix("127.") && host.split(separator: ".").count == 4
        && host.split(separator: ".").allSatisfy { UInt8($0) != nil })
    guard !loopback else { return nil }
    return "refusing plain http:// to \(host): the API key and device secret would cross the "
      + "network readable by anyone on the path; use https://, or allow it for a network you "
      + "trust (ResolverClient.Configuration.allowsInsecureHTTP; nearby: --allow-insecure-http)"
  }
}

@_spi(Resolver) extension ResolverClient: Resolver {}
