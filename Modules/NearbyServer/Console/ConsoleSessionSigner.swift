import Crypto
import Foundation

/// A signed-in operator: the admin API key they signed in with (its public id and project),
/// until when, and a random nonce that the session's CSRF token is derived from.
struct ConsoleSession: Sendable, Hashable {
  var keyID: String
  var project: String
  var expiresAt: Date
  var nonce: String
}

/// Issues and checks the console's session cookies and CSRF tokens.
///
/// The cookie holds the key id, the project, the expiry and a random nonce, signed with
/// HMAC-SHA256 under ``ConsoleConfiguration/sessionSecret``; the session itself is a row in
/// the database, named by a digest of the nonce (``sessionID(of:)``). A signed cookie alone could
/// not be ended: after signing out, a copy of it would still open every page for 8 hours. So
/// every request also needs the row, which signing out deletes
/// (on every instance, since they share the database), revoking the key deletes, and an
/// idle timeout ends. The cookie never holds the API key itself.
struct ConsoleSessionSigner: Sendable {
  private let key: SymmetricKey

  init(secret: [UInt8]?) {
    key = secret.map { SymmetricKey(data: $0) } ?? SymmetricKey(size: .bits256)
  }

  /// The cookie value for a session.
  func cookie(for session: ConsoleSession) -> String {
    let payload = [
      session.keyID, Self.base64URL(Array(session.project.utf8)),
      String(Int64(session.expiresAt.timeIntervalSince1970)), session.nonce,
    ].joined(separator: ".")
    return payload + "." + mac(payload)
  }

  /// The session a cookie value stands for, if its signature holds and it has not expired at
  /// `now` (the key's state is the caller's to check).
  func session(fromCookie value: String, now: Date) -> ConsoleSession? {
    guard value.utf8.count <= 512 else { return nil }
    let parts = value.split(separator: ".", omittingEmptySubsequences: false).map(String.init)
    guard parts.count == 5 else { return nil }
    let payload = parts[0..<4].joined(separator: ".")
    guard let signature = Self.bytes(ofBase64URL: parts[4]),
      HMAC<SHA256>.isValidAuthenticationCode(
        signature, authenticating: Data(payload.utf8), using: key),
      let projectBytes = Self.bytes(ofBase64URL: parts[1]),
      let project = String(validating: projectBytes, as: UTF8.self),
      let expiry = Int64(parts[2])
    else { return nil }
    let expiresAt = Date(timeIntervalSince1970: TimeInterval(expiry))
    guard expiresAt > now else { return nil }
    return ConsoleSession(keyID: parts[0], project: project, expiresAt: expiresAt, nonce: parts[3])
  }

  /// The id the session is stored under: a digest of its nonce.
  static func sessionID(of session: ConsoleSession) -> String {
    base64URL(Array(SHA256.hash(data: Data(("session." + session.nonce).utf8))))
  }

  /// The CSRF token of a session's forms.
  func csrfToken(for session: ConsoleSession) -> String { mac("csrf." + session.nonce) }

  /// The CSRF token of the sign-in form, bound to the nonce of its pre-session cookie.
  func signInToken(nonce: String) -> String { mac("sign-in." + nonce) }

  /// Whether `token` is `expected`, in constant time.
  static func same(_ token: String, _ expected: String) -> Bool {
    let (a, b) = (Array(token.utf8), Array(expected.utf8))
    guard a.count == b.count else { return false }
    return zip(a, b).reduce(UInt8(0)) { $0 | ($1.0 ^ $1.1) } == 0
  }

  /// 16 random bytes in base64url.
  static func nonce() -> String {
    var generator = SystemRandomNumberGenerator()
    return base64URL((0..<16).map { _ in UInt8.random(in: .min ... .max, using: &generator) })
  }

  private func mac(_ text: String) -> String {
    Self.base64URL(Array(HMAC<SHA256>.authenticationCode(for: Data(text.utf8), using: key)))
  }

  static func base64URL(_ bytes: [UInt8]) -> String { Base64URL.encode(bytes) }

  static func bytes(ofBase64URL text: String) -> [UInt8]? {
    guard text.utf8.count <= 400 else { return nil }
    return Base64URL.decode(text)
  }
}
