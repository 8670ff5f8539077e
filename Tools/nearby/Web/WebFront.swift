@_spi(Resolver) import Core
import Foundation
import Logging
import NIOCore
import NIOHTTP1
import NIOPosix
import NIOSSL
@_spi(Resolver) import PeerResolution
import ResolverAPI
@_spi(Resolver) import ResolverWire
import WebClient

/// `nearby --web` in peer mode: the box serves the phone's page over HTTPS and is the phones'
/// resolver. A phone registers as a device of the box's own peer resolver (with the box's
/// project key, which never leaves the box: the phone holds only the link's invitation), so it
/// meets the box through the box's engine and every other peer of the project through the
/// box's exchanges on the LAN, exactly as the box's own device does. The phone speaks the
/// resolver API's subset it needs (register, report, events, unregister), as JSON of
/// openapi.yaml's schemas; its events are kept (``WebMailbox``) and replayed after the
/// `Last-Event-ID` of a reconnecting stream, as the server's.
///
/// Bounded: 32 phones (4 from one address), 128 connections (8 from one address), request
/// bodies of 256 KiB (refused as soon as they are known to be larger), 10 requests a second a
/// phone (a burst of 40), and each request must arrive whole within 20 s of the previous
/// answer (or of the connection).
actor WebFront {
  typealias Connection = NIOAsyncChannel<HTTPServerRequestPart, HTTPServerResponsePart>

  static let maximumBody = 256 * 1024
  static let maximumConnections = 128
  static let maximumConnectionsPerAddress = 8
  static let maximumPhonesPerAddress = 4
  static let requestDeadline: TimeAmount = .seconds(20)
  static let keepalive: Duration = .seconds(15)

  nonisolated let resolver: PeerResolver
  nonisolated let projectKey: String
  nonisolated let invitation: WebInvitation
  nonisolated let assets: WebClientAssets
  nonisolated let logger: Logger
  nonisolated let port: Int
  private let server: NIOAsyncChannel<Connection, Never>
  private var phones = WebPhones()
  /// Registrations under way: counted against the caps before the resolver is awaited.
  private var pending: [String: Int] = [:]
  private var addresses: [DeviceID: String] = [:]
  private var mailboxes: [DeviceID: WebMailbox] = [:]
  /// Each phone's task moving its events from the resolver to its mailbox; owned here,
  /// cancelled when the phone leaves and awaited when the front stops.
  private var pumps: [DeviceID: Task<Void, Never>] = [:]
  private var connections: [String: Int] = [:]

  /// Binds the port (HTTPS with `certificate`).
  /// - Throws: ``ExitFailure`` when the files cannot be served or the port cannot be bound.
  init(
    host: String, port: Int, certificate: WebCertificate.Files, resolver: PeerResolver,
    projectKey: String, logger: Logger
  ) async throws {
    do {
      assets = try WebClientAssets()
    } catch {
      throw ExitFailure("\(error)", code: ExitCodes.failure)
    }
    let context: NIOSSLContext
    do {
      let chain = try NIOSSLCertificate.fromPEMFile(certificate.certificate)
      let key = try NIOSSLPrivateKey(file: certificate.key, format: .pem)
      var tls = TLSConfiguration.makeServerConfiguration(
        certificateChain: chain.map { .certificate($0) }, privateKey: .privateKey(key))
      tls.minimumTLSVersion = .tlsv12
      tls.applicationProtocols = ["http/1.1"]
      context = try NIOSSLContext(configuration: tls)
    } catch {
      throw ExitFailure(
        "cannot serve HTTPS with \(certificate.certificate) and \(certificate.key): \(error)",
        code: ExitCodes.unavailable)
    }
    do {
      server = try await ServerBootstrap(group: MultiThreadedEventLoopGroup.singleton)
        .serverChannelOption(.socketOption(.so_reuseaddr), value: 1)
        .bind(host: host, port: port) { channel in
          channel.eventLoop.makeCompletedFuture {
            let pipeline = channel.pipeline.syncOperations
            try pipeline.addHandler(NIOSSLServerHandler(context: context))
            try pipeline.configureHTTPServerPipeline(withErrorHandling: true)
            return try Connection(wrappingChannelSynchronously: channel)
          }
        }
    } catch {
      throw ExitFailure(
        "cannot serve the web page on \(host):\(port): \(error) (another --web-port?)",
        code: ExitCodes.unavailable)
    }
    self.port = server.channel.localAddress?.port ?? port
    self.resolver = resolver
    self.projectKey = projectKey
    self.invitation = WebInvitation.make()
    self.logger = logger
  }

  /// Serves until cancelled, then closes every connection and unregisters the phones.
  func run() async {
    do {
      try await withThrowingDiscardingTaskGroup { group in
        group.addTask { await self.sweep() }
        try await server.executeThenClose { inbound in
          for try await connection in inbound {
            let address = connection.channel.remoteAddress?.ipAddress ?? "unknown"
            guard admit(address) else {
              try? await connection.channel.close()
              continue
            }
            group.addTask {
              await self.serve(connection)
              await self.release(address)
            }
          }
        }
      }
    } catch {
      if !Task.isCancelled { logger.error("the web page's server stopped: \(error)") }
    }
    for id in phones.phones.keys { await leave(id) }
  }

  private func admit(_ address: String) -> Bool {
    guard connections.values.reduce(0, +) < Self.maximumConnections,
      connections[address, default: 0] < Self.maximumConnectionsPerAddress
    else { return false }
    connections[address, default: 0] += 1
    return true
  }

  private func release(_ address: String) {
    connections[address, default: 1] -= 1
    if connections[address] == 0 { connections[address] = nil }
  }

  /// Unregisters the phones that went silent (a tab closed without its goodbye), each minute.
  private func sweep() async {
    while !Task.isCancelled {
      do { try await Task.sleep(for: .seconds(60)) } catch { return }
      for credentials in phones.silent(at: .now) {
        await leave(credentials.id)
        logger.info("a silent phone left", metadata: ["device": "\(credentials.id)"])
      }
    }
  }

  // MARK: Phones

  private func registerPhone(from address: String) async throws(WebFailure) -> DeviceCredentials {
    let fromAddress =
      addresses.values.filter { $0 == address }.count + pending[address, default: 0]
    guard phones.phones.count + pending.values.reduce(0, +) < WebPhones.maximum,
      fromAddress < Self.maximumPhonesPerAddress
    else {
      throw .init(
        429, "rate_limited",
        "this box takes at most \(WebPhones.maximum) phones at once, "
          + "\(Self.maximumPhonesPerAddress) from one address")
    }
    // Reserved before the await: registrations racing on other connections see it.
    pending[address, default: 0] += 1
    defer {
      pending[address, default: 1] -= 1
      if pending[address] == 0 { pending[address] = nil }
    }
    let credentials: DeviceCredentials
    let events: AsyncStream<SequencedEvent>
    do {
      credentials = try await resolver.register(apiKey: projectKey)
      events = try await resolver.events(for: credentials)
    } catch {
      throw .init(503, "unavailable", "the box's resolver refused: \(error)")
    }
    phones.add(credentials, at: .now)
    addresses[credentials.id] = address
    mailboxes[credentials.id] = WebMailbox()
    let id = credentials.id
    // Isolated to this actor (made here), so each event lands in order.
    pumps[id] = Task {
      for await event in events { deliver(event, to: id) }
    }
    return credentials
  }

  private func deliver(_ event: SequencedEvent, to id: DeviceID) {
    mailboxes[id]?.deliver(event)
  }

  private func attach(_ id: DeviceID, after lastEventID: UInt64?) -> (
    replay: [SequencedEvent], live: AsyncStream<SequencedEvent>
  )? {
    mailboxes[id]?.attach(after: lastEventID)
  }

  private func authorize(_ id: DeviceID, secret: String?) throws(WebFailure) -> DeviceCredentials {
    guard let credentials = phones.authenticate(id, secret: secret) else {
      throw .init(404, "not_found", "no phone \(id) with that secret on this box")
    }
    guard phones.take(id, at: .now) else {
      throw .init(429, "rate_limited", "too many requests for this phone; retry after 1 s")
    }
    return credentials
  }

  /// Unregisters the phone and ends what serves it (its stream, its pump).
  private func leave(_ id: DeviceID) async {
    guard let credentials = phones.phones[id]?.credentials else { return }
    phones.remove(id)
    addresses[id] = nil
    var mailbox = mailboxes.removeValue(forKey: id)
    mailbox?.close()
    let pump = pumps.removeValue(forKey: id)
    pump?.cancel()
    try? await resolver.unregister(credentials)
    await pump?.value
  }

  // MARK: Connections

  nonisolated private func serve(_ connection: Connection) async {
    let channel = connection.channel
    let address = channel.remoteAddress?.ipAddress ?? "unknown"
    // Each request must arrive whole within the deadline of the previous answer (or of the
    // connection): no trickle holds a connection.
    var deadline = channel.eventLoop.scheduleTask(in: Self.requestDeadline) {
      channel.close(promise: nil)
    }
    defer { deadline.cancel() }
    do {
      try await connection.executeThenClose { inbound, outbound in
        var head: HTTPRequestHead?
        var body = ByteBuffer()
        let tooLarge = WebFailure(
          413, "too_large", "the body is over \(Self.maximumBody / 1024) KiB")
        for try await part in inbound {
          switch part {
          case .head(let next):
            head = next
            body.clear()
            if let length = next.headers.first(name: "Content-Length").flatMap(Int.init),
              length > Self.maximumBody
            {
              try await write(tooLarge.answer(), to: outbound, close: true)
              return
            }
          case .body(var chunk):
            guard body.readableBytes + chunk.readableBytes <= Self.maximumBody else {
              try await write(tooLarge.answer(), to: outbound, close: true)
              return
            }
            body.writeBuffer(&chunk)
          case .end:
            deadline.cancel()
            guard let request = head else { return }
            let keepOpen = try await respond(
              request, body: body, from: address, outbound: outbound)
            guard keepOpen, request.isKeepAlive else { return }
            deadline = channel.eventLoop.scheduleTask(in: Self.requestDeadline) {
              channel.close(promise: nil)
            }
          }
        }
      }
    } catch {
      logger.debug("a web connection ended: \(error)")
    }
  }

  /// Answers one request; false when the connection is to close (an event stream that ended).
  nonisolated private func respond(
    _ request: HTTPRequestHead, body: ByteBuffer, from address: String,
    outbound: NIOAsyncChannelOutboundWriter<HTTPServerResponsePart>
  ) async throws -> Bool {
    let key = request.headers.first(name: ResolverContract.apiKeyHeader)
    let secret = request.headers.first(name: ResolverContract.deviceSecretHeader)
    let route = WebRoute(method: request.method.rawValue, path: request.uri)
    var answer: WebAnswer
    do throws(WebFailure) {
      switch route {
      case .page(let path):
        guard let file = assets.file(forPath: path) else {
          throw WebFailure(404, "not_found", "no such file")
        }
        let files = assets.answer(
          file, ifNoneMatch: request.headers[canonicalForm: "If-None-Match"].map(String.init),
          acceptEncoding: request.headers[canonicalForm: "Accept-Encoding"].map(String.init))
        answer = WebAnswer(status: files.status, headers: files.headers, body: files.body)
        answer.headOnly = request.method == .HEAD
      case .key:
        try checkInvitation(key)
        answer = .json(200, ["project": "this box (peer resolution)", "role": "client"])
      case .register:
        try checkInvitation(key)
        let credentials = try await registerPhone(from: address)
        answer = .json(201, ["id": credentials.id.description, "secret": credentials.secret])
      case .report(let id):
        try checkInvitation(key)
        let credentials = try await authorize(id, secret: secret)
        answer = try await report(body, from: credentials)
      case .events(let id):
        try checkInvitation(key)
        _ = try await authorize(id, secret: secret)
        let lastEventID = request.headers.first(name: "Last-Event-ID").flatMap(UInt64.init)
        guard let (replay, live) = await attach(id, after: lastEventID) else {
          throw WebFailure(404, "not_found", "this phone is no longer a device of this box")
        }
        await streamEvents(replay: replay, live: live, outbound: outbound)
        return false
      case .unregister(let id):
        try checkInvitation(key)
        _ = try await authorize(id, secret: secret)
        await leave(id)
        answer = WebAnswer(status: 204, headers: WebAnswer.apiHeaders, body: nil)
      case .notFound:
        throw WebFailure(404, "not_found", "no such path on this box")
      case .methodNotAllowed:
        throw WebFailure(405, "bad_request", "\(request.method.rawValue) is not allowed here")
      }
    } catch {
      answer = error.answer()
    }
    try await write(answer, to: outbound, close: !request.isKeepAlive)
    return true
  }

  nonisolated private func checkInvitation(_ key: String?) throws(WebFailure) {
    guard invitation.admits(key) else {
      throw WebFailure(
        401, "unauthorized",
        "this link's invitation is not this box's (the box made a new one when it restarted): "
          + "open the link it prints now")
    }
  }

  nonisolated private func report(_ body: ByteBuffer, from device: DeviceCredentials)
    async throws(WebFailure) -> WebAnswer
  {
    let report: Core.Report
    do {
      let decoder = JSONDecoder()
      let transcoder = RFC3339DateTranscoder()
      decoder.dateDecodingStrategy = .custom { decoder in
        try transcoder.decode(try decoder.singleValueContainer().decode(String.self))
      }
      let wire = try decoder.decode(
        Components.Schemas.Report.self, from: Data(body.readableBytesView))
      report = try wire.report()
    } catch let error as WireError {
      throw WebFailure(
        error.isOverLimit ? 422 : 400, error.isOverLimit ? "limit_exceeded" : "bad_request",
        error.description)
    } catch {
      throw WebFailure(400, "bad_request", "the report is not a Report of openapi.yaml: \(error)")
    }
    let answer: ReportAnswer
    do {
      answer = try await resolver.report(report, from: device)
    } catch ResolverError.invalidReport(let reason) {
      throw WebFailure(422, "limit_exceeded", reason)
    } catch let error as ResolverError where error.meansDeviceIsGone {
      throw WebFailure(404, "not_found", "this phone is no longer a device of this box")
    } catch {
      throw WebFailure(503, "unavailable", "the box's resolver failed: \(error)")
    }
    do {
      let data = try JSONEncoder().encode(Components.Schemas.ReportAnswer(answer))
      return WebAnswer(status: 200, headers: WebAnswer.jsonHeaders, body: ByteBuffer(bytes: data))
    } catch {
      throw WebFailure(503, "unavailable", "the answer could not be written: \(error)")
    }
  }

  /// The phone's events as Server-Sent Events (as the server's `/v1/devices/{id}/events`):
  /// those kept since `Last-Event-ID`, then each new one, with a keepalive every 15 s, until
  /// the phone leaves, another stream replaces this one, or the connection breaks.
  nonisolated private func streamEvents(
    replay: [SequencedEvent], live: AsyncStream<SequencedEvent>,
    outbound: NIOAsyncChannelOutboundWriter<HTTPServerResponsePart>
  ) async {
    var headers = HTTPHeaders(WebAnswer.apiHeaders)
    headers.replaceOrAdd(name: "Content-Type", value: "text/event-stream")
    do {
      try await outbound.write(
        .head(HTTPResponseHead(version: .http1_1, status: .ok, headers: headers)))
      let encoder = JSONEncoder()
      @Sendable func text(_ item: SequencedEvent) throws -> ByteBuffer {
        let event = Components.Schemas.Event(item)
        let data = try encoder.encode(event)
        return ByteBuffer(
          string: "id: \(item.sequence)\nevent: \(event.kind.rawValue)\ndata: "
            + String(decoding: data, as: UTF8.self) + "\n\n")
      }
      for item in replay { try await outbound.write(.body(.byteBuffer(try text(item)))) }
      try await withThrowingTaskGroup(of: Void.self) { group in
        group.addTask {
          for await item in live { try await outbound.write(.body(.byteBuffer(try text(item)))) }
        }
        group.addTask {
          while true {
            try await Task.sleep(for: Self.keepalive)
            try await outbound.write(.body(.byteBuffer(ByteBuffer(string: "event: keepalive\n\n"))))
          }
        }
        // Whichever ends first (the phone left, the connection broke) ends the stream.
        _ = try await group.next()
        group.cancelAll()
      }
      try await outbound.write(.end(nil))
    } catch {
      logger.debug("an event stream ended: \(error)")
    }
  }

  nonisolated private func write(
    _ answer: WebAnswer, to outbound: NIOAsyncChannelOutboundWriter<HTTPServerResponsePart>,
    close: Bool
  ) async throws {
    var headers = HTTPHeaders(answer.headers)
    headers.replaceOrAdd(name: "Content-Length", value: "\(answer.body?.readableBytes ?? 0)")
    if close { headers.replaceOrAdd(name: "Connection", value: "close") }
    try await outbound.write(
      .head(
        HTTPResponseHead(
          version: .http1_1, status: HTTPResponseStatus(statusCode: answer.status),
          headers: headers)))
    if let body = answer.body, !answer.headOnly {
      try await outbound.write(.body(.byteBuffer(body)))
    }
    try await outbound.write(.end(nil))
  }
}
