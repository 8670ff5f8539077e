import Foundation
import HTTPTypes
import Hummingbird
import NIOCore
import ServerStorage

/// The phone's page under `/web`: static files embedded in the server (``WebClientFiles``),
/// on the API's origin so that the page calls the API with no CORS, and `/web/key`, which
/// tells the page whether its link's key may be used from a phone. Plain routes beside the
/// API's: none of the API's OpenAPI middlewares apply; the key check is the API's
/// (``APIKeyMiddleware/activeKey(_:address:)``, its refused-key counting included).
struct WebClient: Sendable {
  let keys: APIKeyMiddleware
  let limits: RequestLimits
  let files: [String: WebClientFile]

  /// - Throws: if an embedded file is not base64 (a broken generated file).
  init(keys: APIKeyMiddleware, limits: RequestLimits) throws {
    self.keys = keys
    self.limits = limits
    var files: [String: WebClientFile] = [:]
    for source in WebClientFiles.sources {
      guard let file = WebClientFile(source) else {
        throw WebClientError.brokenFile(source.name)
      }
      files[file.name] = file
    }
    self.files = files
  }

  func register(on router: Router<AddressedRequestContext>) {
    // Also `/web/`: the router ignores a trailing slash.
    router.get("web") { request, _ in serve("index.html", request) }
    for name in files.keys where name != "index.html" {
      router.get(RouterPath("web/\(name)")) { request, _ in serve(name, request) }
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

  func serve(_ name: String, _ request: Request) -> Response {
    guard let file = files[name] else { return Response(status: .notFound, headers: Self.headers) }
    var headers = Self.headers
    headers[.eTag] = file.entityTag
    // Revalidated on every load (a 304 costs a round trip, not the bytes): a page from an
    // old server must never run against a new one.
    headers[.cacheControl] = "no-cache"
    headers[.vary] = "Accept-Encoding"
    if request.headers[values: .ifNoneMatch].contains(where: { $0.contains(file.entityTag) }) {
      return Response(status: .notModified, headers: headers)
    }
    headers[.contentType] = file.contentType
    let acceptsGzip = request.headers[values: .acceptEncoding].contains {
      $0.lowercased().contains("gzip")
    }
    if acceptsGzip, let gzipped = file.gzipped {
      headers[.contentEncoding] = "gzip"
      return Response(status: .ok, headers: headers, body: .init(byteBuffer: gzipped))
    }
    return Response(status: .ok, headers: headers, body: .init(byteBuffer: file.bytes))
  }

  /// On every answer under /web: only our own files load (the modem's WebAssembly compiled
  /// by our script: 'wasm-unsafe-eval', not 'unsafe-eval'), calls go to this origin only, no
  /// framing, the microphone for this origin only, no referrer (the link's fragment never
  /// leaves the phone; a referrer would carry the rest).
  static let headers: HTTPFields = [
    HTTPField.Name("Content-Security-Policy")!:
      "default-src 'none'; script-src 'self' 'wasm-unsafe-eval'; style-src 'self'; "
      + "connect-src 'self'; img-src 'self' data:; media-src 'self'; worker-src 'self'; "
      + "form-action 'none'; frame-ancestors 'none'; base-uri 'none'",
    HTTPField.Name("Permissions-Policy")!: "microphone=(self), camera=(self)",
    HTTPField.Name("X-Content-Type-Options")!: "nosniff",
    HTTPField.Name("Referrer-Policy")!: "no-referrer",
    HTTPField.Name("Cross-Origin-Opener-Policy")!: "same-origin",
  ]
}

/// Why the page's files cannot be served.
enum WebClientError: Error, CustomStringConvertible {
  case brokenFile(String)

  var description: String {
    switch self {
    case .brokenFile(let name):
      "the web page's embedded \(name) is not base64: run Tools/scripts/build-web-client.sh"
    }
  }
}
