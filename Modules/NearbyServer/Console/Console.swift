import Foundation
import HTTPTypes
import Hummingbird
import Logging
import NIOCore
import ServerStorage

/// The operator's web console under `/console`: server-rendered pages over the same handlers,
/// validation and limits as the API (each form calls the API's handler for its operation,
/// as the signed-in admin key's project). Its routes are plain Hummingbird routes on the
/// server's router: the API's OpenAPI middlewares (API key, body limit, error answers) never
/// see them, and they see none of the API's routes. The console has its own guards: a signed
/// session on every page, a CSRF token on every form, a body limit, and sign-in attempts
/// counted with the API's refused keys per address.
struct Console: Sendable {
  static let cookieName = "nearby_console"
  static let signInCookieName = "nearby_console_sign_in"
  /// The largest form body; the largest field (an attachment's 1024 bytes as base64,
  /// percent-encoded) fits many times.
  static let maximumBodyBytes = 64 * 1024

  let handler: ResolverHandler
  let limits: RequestLimits
  let signer: ConsoleSessionSigner
  let templates: ConsoleTemplates
  let rates = ConsoleRates()
  let configuration: ResolverServerConfiguration
  let logger: Logger

  /// - Throws: if a template does not parse.
  init(handler: ResolverHandler, limits: RequestLimits, logger: Logger) throws {
    self.handler = handler
    self.limits = limits
    configuration = handler.configuration
    signer = ConsoleSessionSigner(secret: configuration.console.sessionSecret)
    templates = try ConsoleTemplates()
    self.logger = logger
  }

  var storage: any ResolverStorage { handler.storage }
  var now: Date { handler.now() }

  func register(on router: Router<AddressedRequestContext>) {
    router.get("console/style.css") { _, _ in
      Self.file(ConsoleStylesheet.text, type: "text/css; charset=utf-8")
    }
    router.get("console/live.js") { _, _ in
      Self.file(ConsoleLiveScript.text, type: "text/javascript; charset=utf-8")
    }
    registerSignIn(on: router)
    registerOverview(on: router)
    registerBeacons(on: router)
    registerBeacon(on: router)
    registerNamespaces(on: router)
    registerKeys(on: router)
    registerLive(on: router)
  }

  // MARK: Sessions

  /// The request's session: its cookie signed and unexpired, its row still stored (not
  /// signed out) and used within the idle timeout, and its key still active (so a revoked key
  /// ends its sessions at their next request). Its use is noted at most once a minute.
  func session(of request: Request) async throws -> ConsoleSession? {
    guard let cookie = Self.cookie(Self.cookieName, in: request),
      let session = signer.session(fromCookie: cookie, now: now)
    else { return nil }
    let (keyID, project, id) = (
      session.keyID, session.project, ConsoleSessionSigner.sessionID(of: session)
    )
    let (now, idle) = (now, configuration.console.sessionIdleTimeout.seconds)
    let stored = try await handler.read { store -> ConsoleSessionRecord? in
      guard try store.apiKeys.isActiveAPIKey(id: keyID) else { return nil }
      return try store.consoleSessions.consoleSession(project: project, id: id)
    }
    guard let stored, stored.keyID == keyID, stored.expiresAt > now,
      now.timeIntervalSince(stored.lastSeenAt) < idle
    else { return nil }
    if now.timeIntervalSince(stored.lastSeenAt) >= Self.sessionTouchInterval {
      try await handler.transaction { store in
        try store.consoleSessions.touchConsoleSession(project: project, id: id, now: now)
      }
    }
    return session
  }

  /// How often a session's last use is written (seconds): its idle timeout is this precise.
  static let sessionTouchInterval: TimeInterval = 60

  /// Runs a signed-in page: without a session, the answer sends the browser to sign in. The
  /// API's rates apply, per client address and per API key (429 and a page saying so).
  func signedIn(
    _ request: Request, _ context: AddressedRequestContext,
    _ page: @escaping @Sendable (ConsoleSession) async throws -> Response
  ) async -> Response {
    await answering(session: nil) {
      if let wait = limits.perAddress.take(ClientAddress.current.text) {
        throw APIFailure.rateLimited(retryAfter: wait, subject: "this address")
      }
      guard let session = try await session(of: request) else {
        return Self.redirect(
          to: "/console/sign-in", cookies: [clearedSession(secure: secure(request, context))])
      }
      if let wait = limits.perKey.take(session.keyID) {
        throw APIFailure.rateLimited(retryAfter: wait)
      }
      // A form's body has the longer deadline once its session is known; sign-in's does not.
      RequestBodyDeadline.current?.authenticated()
      return await answering(session: session) { try await page(session) }
    }
  }

  /// Runs a signed-in form: a session as for a page, the body read (bounded) and its CSRF
  /// token checked (403 and a page saying so otherwise).
  func signedInForm(
    _ request: Request, _ context: AddressedRequestContext,
    _ action: @escaping @Sendable (ConsoleSession, ConsoleForm) async throws -> Response
  ) async -> Response {
    // The session first: a body is read only for a signed-in operator.
    await signedIn(request, context) { session in
      var request = request
      let form = try await Self.form(of: &request)
      guard ConsoleSessionSigner.same(form["csrf"] ?? "", signer.csrfToken(for: session)) else {
        return message(
          status: .forbidden, heading: "Form refused",
          text:
            "This form did not come from this console session (its CSRF token is missing or "
            + "wrong). Go back, reload the page and send it again.", session: session)
      }
      return try await action(session, form)
    }
  }

  /// Runs `work`; a refusal (``APIFailure``) becomes a page saying why with its status, any
  /// other error a 500 page that says nothing of it (the log does).
  func answering(
    session: ConsoleSession?, _ work: () async throws -> Response
  ) async -> Response {
    do {
      return try await work()
    } catch let failure as APIFailure {
      var answer = message(
        status: failure.status, heading: "Refused", text: failure.message, session: session)
      if let seconds = failure.retryAfter { answer.headers[.retryAfter] = String(seconds) }
      return answer
    } catch {
      logger.error("console request failed", metadata: ["error": "\(String(reflecting: error))"])
      return message(
        status: .internalServerError, heading: "Something went wrong",
        text: "The server could not do this; its log says why.", session: session)
    }
  }

  // MARK: Answers

  /// A whole page.
  func page(
    _ page: ConsoleTemplates.Page, title: String, values: [String: Any] = [:],
    session: ConsoleSession?, status: HTTPResponse.Status = .ok, cookies: [String] = [],
    csrf: String? = nil
  ) -> Response {
    let html = templates.render(
      page, title: title, values: values, project: session?.project,
      csrf: csrf ?? session.map(signer.csrfToken))
    var headers = Self.securityHeaders
    headers[.contentType] = "text/html; charset=utf-8"
    for cookie in cookies { headers.append(HTTPField(name: .setCookie, value: cookie)) }
    return Response(
      status: status, headers: headers, body: .init(byteBuffer: ByteBuffer(string: html)))
  }

  /// A page that says something, with a link back.
  func message(
    status: HTTPResponse.Status, heading: String, text: String, session: ConsoleSession?,
    back: String = "/console", backText: String = "Back to the console"
  ) -> Response {
    page(
      .message, title: heading,
      values: [
        "heading": heading, "message": text, "isError": status.code >= 400, "back": back,
        "backText": backText,
      ], session: session, status: status)
  }

  /// 303 to `path` (after a form: reloading the page does not send it again).
  static func redirect(to path: String, cookies: [String] = []) -> Response {
    var headers = securityHeaders
    headers[.location] = path
    for cookie in cookies { headers.append(HTTPField(name: .setCookie, value: cookie)) }
    return Response(status: .seeOther, headers: headers)
  }

  static func file(_ text: String, type: String) -> Response {
    var headers = securityHeaders
    headers[.contentType] = type
    headers[.cacheControl] = "public, max-age=300"
    return Response(
      status: .ok, headers: headers, body: .init(byteBuffer: ByteBuffer(string: text)))
  }

  /// On every console answer: nothing but our own stylesheet and script loads, no framing,
  /// no caching of pages that hold keys, no referrer with a query.
  static let securityHeaders: HTTPFields = [
    HTTPField.Name("Content-Security-Policy")!:
      "default-src 'none'; style-src 'self'; script-src 'self'; connect-src 'self'; "
      + "img-src 'self'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'",
    HTTPField.Name("X-Content-Type-Options")!: "nosniff",
    HTTPField.Name("Referrer-Policy")!: "no-referrer",
    .cacheControl: "no-store",
  ]

  // MARK: Cookies

  /// The session cookie for `session`.
  func sessionCookie(_ session: ConsoleSession, secure: Bool) -> String {
    let seconds = max(0, Int(session.expiresAt.timeIntervalSince(now)))
    return Self.cookie(
      Self.cookieName, signer.cookie(for: session), maxAge: seconds, path: "/console",
      secure: secure)
  }

  /// A cookie that removes the session cookie.
  func clearedSession(secure: Bool) -> String {
    Self.cookie(Self.cookieName, "", maxAge: 0, path: "/console", secure: secure)
  }

  static func cookie(_ name: String, _ value: String, maxAge: Int, path: String, secure: Bool)
    -> String
  {
    "\(name)=\(value); Path=\(path); Max-Age=\(maxAge); HttpOnly; SameSite=Strict"
      + (secure ? "; Secure" : "")
  }

  /// The value of the request's cookie `name`.
  static func cookie(_ name: String, in request: Request) -> String? {
    for header in request.headers[values: .cookie] {
      for pair in header.split(separator: ";") {
        let parts = pair.split(separator: "=", maxSplits: 1)
        if parts.count == 2, parts[0].trimmingCharacters(in: .whitespaces) == name {
          return parts[1].trimmingCharacters(in: .whitespaces)
        }
      }
    }
    return nil
  }

  // MARK: Requests

  /// A request's form body, at most ``maximumBodyBytes``.
  /// - Throws: 413 (``APIFailure/tooLarge(_:)``) for a larger body.
  static func form(of request: inout Request) async throws -> ConsoleForm {
    let buffer: ByteBuffer
    do { buffer = try await request.body.collect(upTo: maximumBodyBytes) } catch {
      throw APIFailure.tooLarge(
        "The form sent more than \(maximumBodyBytes / 1024) KiB; the most a form takes.")
    }
    return ConsoleForm(Substring(String(buffer: buffer)))
  }

  /// The query string's fields.
  static func query(of request: Request) -> ConsoleForm {
    ConsoleForm(Substring(request.uri.query ?? ""))
  }

  static let forwardedProto = HTTPField.Name("X-Forwarded-Proto")!

  /// Whether the request reached us over TLS: a trusted proxy forwarded it with
  /// `X-Forwarded-Proto: https` (the server itself speaks plain HTTP), or the configuration
  /// says every request does.
  func secure(_ request: Request, _ context: AddressedRequestContext) -> Bool {
    if configuration.console.alwaysSecureCookies || configuration.tls != nil { return true }
    guard let peer = context.remoteAddress?.ipAddress, configuration.trustedProxies.contains(peer)
    else { return false }
    return request.headers[Self.forwardedProto]?.lowercased() == "https"
  }
}
