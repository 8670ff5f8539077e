import Foundation
import HTTPTypes
import OpenAPIRuntime

/// Hands a `429` answer's `Retry-After` (seconds) to the resolver, which waits it out.
struct RetryAfterMiddleware: ClientMiddleware {
  let record: @Sendable (Int) async -> Void

  func intercept(
    _ request: HTTPRequest, body: HTTPBody?, baseURL: URL, operationID: String,
    next: @Sendable (HTTPRequest, HTTPBody?, URL) async throws -> (HTTPResponse, HTTPBody?)
  ) async throws -> (HTTPResponse, HTTPBody?) {
    let (response, answer) = try await next(request, body, baseURL)
    if response.status == .tooManyRequests {
      // Seconds (RFC 9110 §10.2.3); a date or nonsense counts as one second.
      let seconds = response.headerFields[.retryAfter].flatMap { Int($0) } ?? 1
      await record(min(max(seconds, 1), 86_400))
    }
    return (response, answer)
  }
}
