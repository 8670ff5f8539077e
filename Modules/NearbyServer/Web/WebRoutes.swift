import Foundation
import HTTPTypes
import Hummingbird
import NIOCore
import ServerStorage
import WebClient

/// The phone's page under `/web` (WebClient's files), on the API's origin so that the page
/// calls the API with no CORS, and `/web/key`, which tells the page whether its link's key may
/// be used from a phone. Plain routes beside the API's: none of the API's OpenAPI middlewares
/// apply; the key check is the API's (``APIKeyMiddleware/activeKey(_:address:)``, its
/// refused-key counting included).
struct WebRoutes: Sendable {
  let keys: APIKeyMiddleware
  let limits: RequestLimits
  let assets: WebClientAssets

  /// - Throws: if an embedded file is not base64 (a broken generated file).
  init(keys: APIKeyMiddleware, limits: RequestLimits) throws {
    self.keys = keys
    self.limits = limits
    assets = try WebClientAssets()
  }

  func register(on router: Router<AddressedRequestContext>) {
    // Also `/web/`: the router ignores a trailing slash.
    router.get("web") { request, _ in serve(request) }
    for name in assets.files.keys where name != "index.html" {
      router.get(RouterPath("web/\(name)")) { request, _ in serve(request) }
    }
    router.get("web/key") { request, _ in
      do {
        return try await keyRole(request)
      } catch let failure as APIFailure {
        return Self.answer(failure)
      } catch {
        return Self.answer(.unavailable("the key could not be checked; try again"))
      }
    }
  }

  /// Whether the link's key (`X-Nearby-API-Key`) is one a phone may carry: 200 with its
  /// project for a client key; 403 for an admin key (whoever has the link could manage the
  /// project); 401 for an unknown or revoked one.
  func keyRole(_ request: Request) async throws -> Response {
    let address = ClientAddress.current.text
    if let wait = limits.perAddress.take(address) {
      throw APIFailure.rateLimited(retryAfter: wait, subject: "this address")
    }
    let record = try await keys.activeKey(
      request.headers[APIKeyMiddleware.apiKeyHeader], address: address)
    guard !record.role.includes(.admin) else {
      throw APIFailure.forbidden(
        "this link carries an admin key, which manages the project; a phone's link must carry "
          + "a client key (`nearby server keys create --project \(record.project) --role "
          + "client`), and an admin key that was shared should be revoked")
    }
    let body = try JSONSerialization.data(
      withJSONObject: ["project": record.project, "role": "client"], options: [.sortedKeys])
    var headers = Self.headers
    headers[.contentType] = "application/json; charset=utf-8"
    headers[.cacheControl] = "no-store"
    return Response(status: .ok, headers: headers, body: .init(byteBuffer: ByteBuffer(data: body)))
  }

  func serve(_ request: Request) -> Response {
    guard let file = assets.file(forPath: request.uri.path) else {
      return Response(status: .notFound, headers: Self.headers)
    }
    let answer = assets.answer(
      file, ifNoneMatch: request.headers[values: .ifNoneMatch],
      acceptEncoding: request.headers[values: .acceptEncoding])
    var headers = HTTPFields()
    for (name, value) in answer.headers {
      if let name = HTTPField.Name(name) { headers.append(HTTPField(name: name, value: value)) }
    }
    return Response(
      status: .init(code: answer.status), headers: headers,
      body: answer.body.map { .init(byteBuffer: $0) } ?? .init())
  }

  /// The API's JSON error answer (openapi.yaml's `Error`) for a plain route.
  static func answer(_ failure: APIFailure) -> Response {
    var headers = headers
    headers[.contentType] = "application/json; charset=utf-8"
    headers[.cacheControl] = "no-store"
    if let retryAfter = failure.retryAfter { headers[.retryAfter] = String(retryAfter) }
    let body = ["error": failure.code, "message": failure.message]
    let data = (try? JSONSerialization.data(withJSONObject: body, options: [.sortedKeys])) ?? Data()
    return Response(
      status: .init(code: failure.status.code), headers: headers,
      body: .init(byteBuffer: ByteBuffer(data: data)))
  }

  /// WebClient's security headers, for the answers made here.
  static let headers: HTTPFields = {
    var fields = HTTPFields()
    for (name, value) in WebClientAssets.securityHeaders {
      if let name = HTTPField.Name(name) { fields.append(HTTPField(name: name, value: value)) }
    }
    return fields
  }()
}
