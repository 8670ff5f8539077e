import Foundation
import HTTPTypes
import Logging
import OpenAPIRuntime
@_spi(Resolver) import ResolverWire

/// Turns every error into a JSON answer (openapi.yaml's `Error`): ``APIFailure`` as it says;
/// input the generated code could not decode → 400 naming the problem; anything else → 503
/// (the database or the server is in trouble; logged), never a 500 for client input.
struct ErrorAnswerMiddleware: ServerMiddleware {
  let logger: Logger

  func intercept(
    _ request: HTTPRequest, body: HTTPBody?, metadata: ServerRequestMetadata, operationID: String,
    next:
      @Sendable (HTTPRequest, HTTPBody?, ServerRequestMetadata) async throws -> (
        HTTPResponse, HTTPBody?
      )
  ) async throws -> (HTTPResponse, HTTPBody?) {
    do {
      return try await next(request, body, metadata)
    } catch {
      let failure = Self.failure(for: error)
      if failure.status.code >= 500 {
        logger.error(
          "request failed",
          metadata: ["operation": "\(operationID)", "error": "\(String(reflecting: error))"])
      }
      return (
        HTTPResponse(status: failure.status, headerFields: failure.httpHeaderFields),
        failure.httpBody
      )
    }
  }

  static func failure(for error: any Error) -> APIFailure {
    if let failure = error as? APIFailure { return failure }
    guard let serverError = error as? ServerError else {
      return .unavailable("\(error)")
    }
    if let failure = serverError.underlyingError as? APIFailure { return failure }
    // A value the wire mapping refuses while decoding (a `date-time` that is not RFC 3339).
    if let wire = serverError.underlyingError as? WireError {
      return .badRequest("malformed request: \(wire.description)")
    }
    if let decoding = serverError.underlyingError as? DecodingError {
      return .badRequest("malformed request: \(describe(decoding))")
    }
    let status = serverError.httpStatus
    if (400..<500).contains(status.code) {
      return APIFailure(status, "bad_request", "malformed request: \(serverError.causeDescription)")
    }
    return .unavailable(serverError.causeDescription)
  }

  /// A decoding error as one line: what is wrong and where.
  static func describe(_ error: DecodingError) -> String {
    func path(_ context: DecodingError.Context) -> String {
      let keys = context.codingPath.map { $0.intValue.map { "[\($0)]" } ?? ".\($0.stringValue)" }
      return keys.isEmpty ? "the body" : keys.joined().trimmingCharacters(in: ["."])
    }
    switch error {
    case .dataCorrupted(let context):
      return "\(path(context)): \(context.debugDescription)"
    case .keyNotFound(let key, let context):
      return "\(path(context)): missing field '\(key.stringValue)'"
    case .typeMismatch(let type, let context):
      return "\(path(context)): expected \(type)"
    case .valueNotFound(let type, let context):
      return "\(path(context)): expected \(type), found null"
    @unknown default:
      return "\(error)"
    }
  }
}
