import HTTPTypes
import OpenAPIRuntime

/// Counts requests and times their handling (to the start of the response body).
struct RequestMetricsMiddleware: ServerMiddleware {
  let metrics: ServerMetrics

  func intercept(
    _ request: HTTPRequest, body: HTTPBody?, metadata: ServerRequestMetadata, operationID: String,
    next:
      @Sendable (HTTPRequest, HTTPBody?, ServerRequestMetadata) async throws -> (
        HTTPResponse, HTTPBody?
      )
  ) async throws -> (HTTPResponse, HTTPBody?) {
    let start = ContinuousClock.now
    defer {
      metrics.requests.increment()
      let elapsed = start.duration(to: .now)
      metrics.requestDuration.recordNanoseconds(
        elapsed.components.seconds * 1_000_000_000 + elapsed.components.attoseconds / 1_000_000_000)
    }
    return try await next(request, body, metadata)
  }
}
