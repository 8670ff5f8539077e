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
/// openapi.yaml's schemas.
///
/// Bounded: 32 phones, 128 connections, request bodies of 256 KiB, 10 requests a second a
/// phone (a burst of 40), a request's head and body read within 20 s of silence.
actor WebFront {
  typealias Connection = NIOAsyncChannel<HTTPServerRequestPart, HTTPServerResponsePart>

  static let maximumBody = 256 * 1024
  static let maximumConnections = 128
  static let idleTimeout: TimeAmount = .seconds(20)
  static let keepalive: Duration = .seconds(15)

  nonisolated let resolver: PeerResolver
  nonisolated let projectKey: String
  nonisolated let invitation: WebInvitation
  nonisolated let assets: WebClientAssets
  nonisolated let logger: Logger
  nonisolated let port: Int
  private let server: NIOAsyncChannel<Connection, Never>
  private var phones = WebPhones()
  private var connections = 0

  /// Binds the port (HTTPS with `certificate`).
  /// - Throws: ``ExitFailure`` when the files cannot be served or the port cannot be bound.
  init(
    host: String, port: Int, certificate: WebCertificate.Files, resolver: PeerResolver,
    projectKey: String, logger: Logger
  ) async throws {
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
            try pipeline.addHandler(
              IdleStateHandler(readTimeout: Self.idleTimeout), name: "idle")
            try pipeline.addHandler(CloseOnReadIdle(), name: "close-on-idle")
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
    do {
      assets = try WebClientAssets()
    } catch {
      throw ExitFailure("\(error)", code: ExitCodes.failure)
    }
  }

  /// Serves until cancelled, then closes every connection and unregisters the phones.
  func run() async {
    do {
      try await withThrowingDiscardingTaskGroup { group in
        group.addTask { await self.sweep() }
        try await server.executeThenClose { inbound in
          for try await connection in inbound {
            guard admit() else {
              try? await connection.channel.close()
              continue
            }
            group.addTask {
              await self.serve(connection)
              await self.release()
            }
          }
        }
      }
    } catch {
      if !Task.isCancelled { logger.error("the web page's server stopped: \(error)") }
    }
    for credentials in phones.phones.values.map(\.credentials) {
      try? await resolver.unregister(credentials)
    }
    phones = WebPhones()
  }

  private func admit() -> Bool {
    guard connections < Self.maximumConnections else { return false }
    connections += 1
    return true
  }

  private func release() { connections -= 1 }

  /// Unregisters the phones that went silent (a tab closed without its goodbye), each minute.
  private func sweep() async {
    while !Task.isCancelled {
      do { try await Task.sleep(for: .seconds(60)) } catch { return }
      for credentials in phones.removeSilent(at: .now) {
        try? await resolver.unregister(credentials)
        logger.info("a silent phone left", metadata: ["device": "\(credentials.id)"])
      }
    }
  }

  // MARK: Phones

  private func registerPhone() async throws(WebFailure) -> DeviceCredentials {
    guard !phones.isFull else {
      throw .init(
        429, "rate_limited", "this box takes at most \(WebPhones.maximum) phones at once")
    }
    do {
      let credentials = try await resolver.register(apiKey: projectKey)
      phones.add(credentials, at: .now)
      return credentials
    } catch {
      throw .init(503, "unavailable", "the box's resolver refused: \(error)")
    }
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

  private func removePhone(_ id: DeviceID) { phones.remove(id) }

  // MARK: Connections

  nonisolated private func serve(_ connection: Connection) async {
    do {
      try await connection.executeThenClose { inbound, outbound in
        var head: HTTPRequestHead?
        var body = ByteBuffer()
        var tooLarge = false
        for try await part in inbound {
          switch part {
          case .head(let next):
            (head, tooLarge) = (next, false)
            body.clear()
          case .body(var chunk):
            if body.readableBytes + chunk.readableBytes > Self.maximumBody {
              tooLarge = true
            } else {
              body.writeBuffer(&chunk)
            }
          case .end:
            guard let request = head else { continue }
            if tooLarge {
              try await write(
                WebFailure(
                  413, "too_large", "the body is over \(Self.maximumBody / 1024) KiB"
                ).answer(), to: outbound, close: true)
              return
            }
            let keepOpen = try await respond(
              request, body: body, outbound: outbound, channel: connection.channel)
            if !keepOpen { return }
          }
        }
      }
    } catch {
      logger.debug("a web connection ended: \(error)")
    }
  }

  /// Answers one request; false when the connection is to close (an event stream that ended).
  nonisolated private func respond(
    _ request: HTTPRequestHead, body: ByteBuffer,
    outbound: NIOAsyncChannelOutboundWriter<HTTPServerResponsePart>, channel: any Channel
  ) async throws -> Bool {
    let key = request.headers.first(name: ResolverContract.apiKeyHeader)
    let secret = request.headers.first(name: ResolverContract.deviceSecretHeader)
    let route = WebRoute(method: request.method.rawValue, path: request.uri)
    let answer: WebAnswer
    do throws(WebFailure) {
      switch route {
      case .page(let path):
        guard let file = assets.file(forPath: path) else {
          throw WebFailure(404, "not_found", "no such file")
        }
        let files = assets.answer(
          file, ifNoneMatch: request.headers[canonicalForm: "If-None-Match"].map(String.init),
          acceptEncoding: request.headers[canonicalForm: "Accept-Encoding"].map(String.init))
        var page = WebAnswer(status: files.status, headers: files.headers, body: files.body)
        if request.method == .HEAD { page.body = nil }
        answer = page
      case .key:
        try checkInvitation(key)
        answer = .json(200, ["project": "this box (peer resolution)", "role": "client"])
      case .register:
        try checkInvitation(key)
        let credentials = try await registerPhone()
        answer = .json(201, ["id": credentials.id.description, "secret": credentials.secret])
      case .report(let id):
        try checkInvitation(key)
        let credentials = try await authorize(id, secret: secret)
        answer = try await report(body, from: credentials)
      case .events(let id):
        try checkInvitation(key)
        let credentials = try await authorize(id, secret: secret)
        try await streamEvents(of: credentials, outbound: outbound, channel: channel)
        return false
      case .unregister(let id):
        try checkInvitation(key)
        let credentials = try await authorize(id, secret: secret)
        await removePhone(id)
        try? await resolver.unregister(credentials)
        answer = WebAnswer(status: 204, headers: WebAnswer.apiHeaders, body: nil)
      case .notFound:
        throw WebFailure(404, "not_found", "no such path on this box")
      case .methodNotAllowed:
        throw WebFailure(405, "bad_request", "\(request.method.rawValue) is not allowed here")
      }
    } catch {
      answer = error.answer()
    }
    try await write(answer, to: outbound, close: false)
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

  /// The phone's events as Server-Sent Events (as the server's `/v1/devices/{id}/events`),
  /// with a keepalive every 15 s, until the phone leaves or the box stops.
  nonisolated private func streamEvents(
    of device: DeviceCredentials, outbound: NIOAsyncChannelOutboundWriter<HTTPServerResponsePart>,
    channel: any Channel
  ) async throws(WebFailure) {
    let events: AsyncStream<SequencedEvent>
    do {
      events = try await resolver.events(for: device)
    } catch {
      throw WebFailure(404, "not_found", "this phone is no longer a device of this box")
    }
    // A stream reads nothing more from the phone: no read deadline for it.
    _ = try? await channel.pipeline.removeHandler(name: "close-on-idle").get()
    var headers = HTTPHeaders(WebAnswer.apiHeaders)
    headers.replaceOrAdd(name: "Content-Type", value: "text/event-stream")
    do {
      try await outbound.write(
        .head(HTTPResponseHead(version: .http1_1, status: .ok, headers: headers)))
      try await withThrowingTaskGroup(of: Void.self) { group in
        group.addTask {
          let encoder = JSONEncoder()
          for await item in events {
            let event = Components.Schemas.Event(item)
            let data = try encoder.encode(event)
            let text =
              "id: \(item.sequence)\nevent: \(event.kind.rawValue)\ndata: "
              + String(decoding: data, as: UTF8.self) + "\n\n"
            try await outbound.write(.body(.byteBuffer(ByteBuffer(string: text))))
          }
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
    if let body = answer.body { try await outbound.write(.body(.byteBuffer(body))) }
    try await outbound.write(.end(nil))
  }
}

/// Closes a connection that sent nothing for ``WebFront/idleTimeout`` (a handshake, a head or
/// a body that never comes), so that no client holds one open for free.
final class CloseOnReadIdle: ChannelInboundHandler, Sendable {
  typealias InboundIn = NIOAny

  func userInboundEventTriggered(context: ChannelHandlerContext, event: Any) {
    if let idle = event as? IdleStateHandler.IdleStateEvent, idle == .read {
      context.close(promise: nil)
    } else {
      context.fireUserInboundEventTriggered(event)
    }
  }
}
