import ResolverWire
import Core
import HTTPTypes
import OpenAPIRuntime
import ServerStorage

/// Checks the project API key (`X-Nearby-API-Key`) and its role on every call but `/healthz`
/// (and `/metrics`, unless it needs a key), before the body is read; applies the rate limits
/// per client address and per key; and hands the project and the device secret to the
/// handlers (``RequestContext``). The per-device limit is the handler's, taken once the device
/// authenticated (``ResolverHandler/authorizeDevice(project:)``): naming a device is not
/// being it.
///
/// A client address that keeps sending refused keys (unknown, revoked, malformed, missing) is
/// answered 429 without its keys being looked up, so guessing keys costs the database
/// nothing beyond a few a second.
struct APIKeyMiddleware: ServerMiddleware {
  static let apiKeyHeader = HTTPField.Name(ResolverContract.apiKeyHeader)!
  static let deviceSecretHeader = HTTPField.Name(ResolverContract.deviceSecretHeader)!
  static let open: Set<String> = ["health", "metrics"]
  /// The operations that manage the project: an admin key's only (every other needs a client
  /// key, which an admin key also is).
  static let adminOperations: Set<String> = [
    "registerBeacon", "listBeacons", "deleteBeacon", "addAttachment", "deleteAttachment",
    "updateBeacon", "listAttachments", "batchDeleteAttachments", "listNamespaces",
    "setNamespaceVisibility", "getBeaconDiagnostics", "listDiagnostics",
  ]
  static let maximumKeyBytes = 128

  let keys: APIKeyCache
  let limits: RequestLimits
  /// Whether `/metrics` needs an admin key.
  let metricsNeedKey: Bool

  func intercept(
    _ request: HTTPRequest, body: HTTPBody?, metadata: ServerRequestMetadata, operationID: String,
    next:
      @Sendable (HTTPRequest, HTTPBody?, ServerRequestMetadata) async throws -> (
        HTTPResponse, HTTPBody?
      )
  ) async throws -> (HTTPResponse, HTTPBody?) {
    let isMetrics = operationID == "metrics"
    if Self.open.contains(operationID), !(isMetrics && metricsNeedKey) {
      return try await next(request, body, metadata)
    }
    let address = ClientAddress.current.text
    if let wait = limits.perAddress.take(address) {
      throw APIFailure.rateLimited(retryAfter: wait, subject: "this address")
    }
    let record = try await key(of: request, address: address, isMetrics: isMetrics)
    if Self.adminOperations.contains(operationID) || isMetrics, !record.role.includes(.admin) {
      throw APIFailure.forbidden(
        "this is a client API key, which registers devices and reports; "
          + (isMetrics ? "/metrics needs" : "beacons and their attachments need")
          + " an admin key (`nearby server keys create --project \(record.project) --role admin`)")
    }
    if let wait = limits.perKey.take(record.id) {
      throw APIFailure.rateLimited(retryAfter: wait)
    }
    // A key holder's body has the longer deadline; a body read before this had the short one.
    RequestBodyDeadline.current?.authenticated()
    let context = RequestContext(
      project: record.project, apiKeyID: record.id,
      deviceSecret: request.headerFields[Self.deviceSecretHeader])
    return try await RequestContext.$current.withValue(context) {
      try await next(request, body, metadata)
    }
  }

  /// The request's active key (from `X-Nearby-API-Key`, or for `/metrics` also
  /// `Authorization: Bearer`).
  /// - Throws: 401 for no key or a refused one, 429 once the address refused too many, 503
  ///   when the database does not answer.
  private func key(of request: HTTPRequest, address: String, isMetrics: Bool) async throws
    -> APIKeyRecord
  {
    var text = request.headerFields[Self.apiKeyHeader]
    if text == nil, isMetrics, let authorization = request.headerFields[.authorization],
      authorization.lowercased().hasPrefix("bearer ")
    {
      text = String(authorization.dropFirst("bearer ".count))
    }
    return try await activeKey(text, address: address)
  }

  /// The active key whose text is `text`, counted as the API counts keys (refused keys per
  /// address): for the plain routes that take a key (the web page's check of its link).
  /// - Throws: 401 for no key or a refused one, 429 once the address refused too many, 503
  ///   when the database does not answer.
  func activeKey(_ text: String?, address: String) async throws -> APIKeyRecord {
    guard let text, !text.isEmpty else {
      try await refused(address)
      throw APIFailure.unauthorized(
        "missing X-Nearby-API-Key header; create a key with "
          + "`nearby server keys create --project P --role client`")
    }
    // Keys are `nk_` + 43 characters; a longer text or a control character is no key, and is
    // neither looked up nor remembered by the cache.
    guard text.utf8.count <= Self.maximumKeyBytes, !Message.containsControlCharacters(text) else {
      try await refused(address)
      throw APIFailure.unauthorized("unknown or revoked API key")
    }
    // A key in use passes; one to look up waits while the address refuses too many.
    if let known = await keys.cachedActiveKey(text) { return known }
    if let wait = limits.refusedKeysPerAddress.exhausted(address) {
      throw APIFailure.rateLimited(retryAfter: wait, subject: "refused API keys from this address")
    }
    let found: APIKeyRecord?
    do {
      found = try await keys.activeKey(text)
    } catch {
      // What the database said stays out of the answer (the sweeper logs database failures).
      throw APIFailure.unavailable("the database did not answer; try again")
    }
    guard let found else {
      try await refused(address)
      throw APIFailure.unauthorized("unknown or revoked API key")
    }
    return found
  }

  /// Counts a refused key against the address; 429 once it has refused too many.
  private func refused(_ address: String) async throws {
    if let wait = limits.refusedKeysPerAddress.take(address) {
      throw APIFailure.rateLimited(retryAfter: wait, subject: "refused API keys from this address")
    }
  }
}
