/// What the API-key middleware learned about the request, for the handlers.
struct RequestContext: Sendable {
  /// The project of the request's API key.
  var project: String
  /// The key's public id (an event stream checks on every wake that it is not revoked).
  var apiKeyID: String
  /// The `X-Nearby-Device-Secret` header, if any.
  var deviceSecret: String?

  @TaskLocal static var current: RequestContext?

  /// The context, which the middleware always sets before a handler that needs it runs.
  static func required() throws(APIFailure) -> RequestContext {
    guard let current else { throw APIFailure.unauthorized("missing X-Nearby-API-Key header") }
    return current
  }
}
