import Foundation
import NIOCore
import WebClient

/// An answer of `nearby --web`'s front: status, headers (WebClient's security headers on every
/// one) and body.
struct WebAnswer {
  var status: Int
  var headers: [(name: String, value: String)]
  var body: ByteBuffer?
  /// A HEAD request's answer: the body's length, not its bytes.
  var headOnly = false

  static let apiHeaders: [(name: String, value: String)] =
    WebClientAssets.securityHeaders + [("Cache-Control", "no-store")]
  static let jsonHeaders = apiHeaders + [("Content-Type", "application/json; charset=utf-8")]

  static func json(_ status: Int, _ object: [String: String]) -> WebAnswer {
    let data =
      (try? JSONSerialization.data(withJSONObject: object, options: [.sortedKeys])) ?? Data()
    return WebAnswer(status: status, headers: jsonHeaders, body: ByteBuffer(bytes: data))
  }
}

/// A refusal, as the resolver API answers one (openapi.yaml's `Error`).
struct WebFailure: Error {
  var status: Int
  var code: String
  var message: String

  init(_ status: Int, _ code: String, _ message: String) {
    (self.status, self.code, self.message) = (status, code, message)
  }

  func answer() -> WebAnswer { .json(status, ["error": code, "message": message]) }
}
