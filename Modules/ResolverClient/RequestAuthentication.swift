import ResolverWire
import HTTPTypes
import OpenAPIRuntime
import Foundation

/// The headers a call carries: the project API key, and the device secret for device calls.
struct RequestAuthentication: Sendable {
  var apiKey: String
  var deviceSecret: String?
}

/// Adds its ``RequestAuthentication`` to every request as `X-Nearby-API-Key` and
/// `X-Nearby-Device-Secret` (the OpenAPI document's security schemes). One is made per call.
struct AuthenticationMiddleware: ClientMiddleware {
  static let apiKeyHeader = HTTPField.Name(ResolverContract.apiKeyHeader)!
  static let deviceSecretHeader = HTTPField.Name(ResolverContract.deviceSecretHeader)!

  let authentication: RequestAuthentication

  func intercept(
    _ request: HTTPRequest, body: HTTPBody?, baseURL: URL, operationID: String,
    next: @Sendable (HTTPRequest, HTTPBody?, URL) async throws -> (HTTPResponse, HTTPBody?)
  ) async throws -> (HTTPResponse, HTTPBody?) {
    var request = request
    request.headerFields[Self.apiKeyHeader] = authentication.apiKey
    if let secret = authentication.deviceSecret {
      request.headerFields[Self.deviceSecretHeader] = secret
    }
    return try await next(request, body, baseURL)
  }
}
