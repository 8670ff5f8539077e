import Core
import Foundation
import HTTPTypes
import Hummingbird
import ServerStorage

/// Signing in with an admin API key, and out. A refused key counts against the address
/// exactly as a refused key on the API does (``RequestLimits/refusedKeysPerAddress``): past
/// the burst, sign-in answers 429 without looking keys up.
extension Console {
  func registerSignIn(on router: Router<AddressedRequestContext>) {
    router.get("console/sign-in") { request, context in
      await answering(session: nil) {
        if try await session(of: request) != nil { return Self.redirect(to: "/console") }
        return signInPage(request, context, error: nil, status: .ok)
      }
    }
    router.post("console/sign-in") { request, context in
      await answering(session: nil) { try await signIn(request, context) }
    }
    router.post("console/sign-out") { request, context in
      await signedInForm(request, context) { session, _ in
        // Ended in the database: a copy of the cookie opens nothing after this.
        let (project, id) = (session.project, ConsoleSessionSigner.sessionID(of: session))
        try await handler.transaction { store in
          try store.consoleSessions.endConsoleSession(project: project, id: id)
        }
        return Self.redirect(
          to: "/console/sign-in", cookies: [clearedSession(secure: secure(request, context))])
      }
    }
  }

  /// The sign-in form, with a fresh pre-session nonce its CSRF token is bound to.
  func signInPage(
    _ request: Request, _ context: AddressedRequestContext, error: String?,
    status: HTTPResponse.Status
  ) -> Response {
    let nonce = ConsoleSessionSigner.nonce()
    var values: [String: Any] = [:]
    if let error { values["error"] = error }
    return page(
      .signIn, title: "Sign in", values: values, session: nil, status: status,
      cookies: [
        Self.cookie(
          Self.signInCookieName, nonce, maxAge: 3600, path: "/console",
          secure: secure(request, context))
      ], csrf: signer.signInToken(nonce: nonce))
  }

  func signIn(_ request: Request, _ context: AddressedRequestContext) async throws -> Response {
    var request = request
    let form = try await Self.form(of: &request)
    let nonce = Self.cookie(Self.signInCookieName, in: request) ?? ""
    guard !nonce.isEmpty,
      ConsoleSessionSigner.same(form["csrf"] ?? "", signer.signInToken(nonce: nonce))
    else {
      return message(
        status: .forbidden, heading: "Form refused",
        text:
          "This sign-in form did not come from this console (its CSRF token is missing or "
          + "wrong, or cookies are off). Reload the sign-in page and try again.",
        session: nil, back: "/console/sign-in", backText: "Sign in")
    }
    let address = ClientAddress.current.text
    if let wait = limits.perAddress.take(address) {
      throw APIFailure.rateLimited(retryAfter: wait, subject: "this address")
    }
    if let wait = limits.refusedKeysPerAddress.exhausted(address) {
      return signInPage(
        request, context,
        error: "Too many refused keys from your address; try again in \(wait) s.",
        status: .tooManyRequests)
    }
    let text = form.text("key")
    var record: APIKeyRecord?
    // The API's rules for a key's text: longer, or with a control character, is no key.
    if !text.isEmpty, text.utf8.count <= APIKeyMiddleware.maximumKeyBytes,
      !Message.containsControlCharacters(text)
    {
      record = try await handler.read { store in try store.apiKeys.apiKey(text) }
    }
    guard let record, !record.isRevoked else {
      if let wait = limits.refusedKeysPerAddress.take(address) {
        return signInPage(
          request, context,
          error: "Too many refused keys from your address; try again in \(wait) s.",
          status: .tooManyRequests)
      }
      return signInPage(
        request, context, error: "Unknown or revoked API key.", status: .unauthorized)
    }
    guard record.role.includes(.admin) else {
      return signInPage(
        request, context,
        error:
          "This is a client API key, for apps. The console needs an admin key "
          + "(nearby-server keys create --project \(record.project) --role admin).",
        status: .forbidden)
    }
    let session = ConsoleSession(
      keyID: record.id, project: record.project,
      expiresAt: now.addingTimeInterval(configuration.console.sessionLifetime.seconds),
      nonce: ConsoleSessionSigner.nonce())
    let (project, id, keyID, now) = (
      session.project, ConsoleSessionSigner.sessionID(of: session), session.keyID, now
    )
    let (expiresAt, idle) = (session.expiresAt, configuration.console.sessionIdleTimeout.seconds)
    try await handler.transaction { store in
      try store.consoleSessions.createConsoleSession(
        project: project, id: id, keyID: keyID, now: now, expiresAt: expiresAt,
        idleTimeout: idle)
    }
    let secure = secure(request, context)
    return Self.redirect(
      to: "/console",
      cookies: [
        sessionCookie(session, secure: secure),
        Self.cookie(Self.signInCookieName, "", maxAge: 0, path: "/console", secure: secure),
      ])
  }
}
