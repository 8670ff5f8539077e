import Core
import ServerStorage
import HTTPTypes
import OpenAPIRuntime

/// Checks the project API key (`X-Nearby-API-Key`) and its role of every call but `/healthz` and
/// `/metrics`, applies the key's rate limit, and hands the project and the device secret to
/// the handlers (``RequestContext``).
struct APIKeyMiddleware: ServerMiddleware {
  static let apiKeyHeader = HTTPField.Name("X-Nearby-API-Key")!
  static let deviceSecretHeader = HTTPField.Name("X-Nearby-Device-Secret")!
  static let open: Set<String> = ["health", "metrics"]
  /// The operations that manage the project: an admin key's only (every other needs a client
  /// key, which an admin key also is).
  static let adminOperations: Set<String> = [
    "registerBeacon", "listBeacons", "deleteBeacon", "addAttachment", "deleteAttachment",
  ]
  static let maximumKeyBytes = 128

  let keys: APIKeyCache
  let limiter: RateLimiter

  func intercept(
    _ request: HTTPRequest, body: HTTPBody?, metadata: ServerRequestMetadata, operationID: String,
    next:
      @Sendable (HTTPRequest, HTTPBody?, ServerRequestMetadata) async throws -> (
        HTTPResponse, HTTPBody?
      )
  ) async throws -> (HTTPResponse, HTTPBody?) {
    if Self.open.contains(operationID) { return try await next(request, body, metadata) }
    guard let key = request.headerFields[Self.apiKeyHeader], !key.isEmpty else {
      throw APIFailure.unauthorized(
        "missing X-Nearby-API-Key header; create a key with `nearby server keys create --project P --role client`"
      )
    }
    // Keys are `nk_` + 43 characters; a longer text or a control character is no key, and is
    // neither looked up nor remembered by the cache.
    guard key.utf8.count <= Self.maximumKeyBytes, !Message.containsControlCharacters(key) else {
      throw APIFailure.unauthorized("unknown or revoked API key")
    }
    let record: APIKeyRecord
    do {
      guard let found = try await keys.activeKey(key) else {
        throw APIFailure.unauthorized("unknown or revoked API key")
      }
      record = found
    } catch let failure as APIFailure {
      throw failure
    } catch {
      // What the database said stays out of the answer (the sweeper logs database failures).
      throw APIFailure.unavailable("the database did not answer; try again")
    }
    if Self.adminOperations.contains(operationID), !record.role.includes(.admin) {
      throw APIFailure.forbidden(
        "this is a client API key, which registers devices and reports; beacons and their "
          + "attachments need an admin key (`nearby server keys create --project "
          + "\(record.project) --role admin`)")
    }
    if let wait = await limiter.take(record.id) {
      throw APIFailure.rateLimited(retryAfter: wait)
    }
    let context = RequestContext(
      project: record.project, apiKeyID: record.id,
      deviceSecret: request.headerFields[Self.deviceSecretHeader])
    return try await RequestContext.$current.withValue(context) {
      try await next(request, body, metadata)
    }
  }
}
