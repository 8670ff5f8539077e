import HTTPTypes
import OpenAPIRuntime

/// Refuses request bodies over `limit` bytes with 413 before anything decodes them.
struct BodyLimitMiddleware: ServerMiddleware {
  let limit: Int

  func intercept(
    _ request: HTTPRequest, body: HTTPBody?, metadata: ServerRequestMetadata, operationID: String,
    next:
      @Sendable (HTTPRequest, HTTPBody?, ServerRequestMetadata) async throws -> (
        HTTPResponse, HTTPBody?
      )
  ) async throws -> (HTTPResponse, HTTPBody?) {
    guard let body else { return try await next(request, nil, metadata) }
    if case .known(let length) = body.length, length > limit {
      throw APIFailure.tooLarge("the request body is \(length) bytes; the limit is \(limit)")
    }
    let bytes: ArraySlice<UInt8>
    do {
      bytes = try await ArraySlice(collecting: body, upTo: limit)
    } catch {
      throw APIFailure.tooLarge("the request body is over the limit of \(limit) bytes")
    }
    return try await next(request, HTTPBody(bytes), metadata)
  }
}
