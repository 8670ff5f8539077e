import Foundation
public import HTTPTypes
public import OpenAPIRuntime

/// An error answer: status, a stable code and a message for people. Handlers and middlewares
/// throw it; the server's error middleware turns it (and every other error) into JSON.
public struct APIFailure: Error, Sendable, Hashable, HTTPResponseConvertible {
  public var status: HTTPResponse.Status
  /// A stable code (see openapi.yaml's `Error`).
  public var code: String
  public var message: String
  /// Seconds to wait, for 429.
  public var retryAfter: Int?

  public init(
    _ status: HTTPResponse.Status, _ code: String, _ message: String, retryAfter: Int? = nil
  ) {
    self.status = status
    self.code = code
    self.message = message
    self.retryAfter = retryAfter
  }

  public static func badRequest(_ message: String) -> APIFailure {
    APIFailure(.badRequest, "bad_request", message)
  }
  public static func unauthorized(_ message: String) -> APIFailure {
    APIFailure(.unauthorized, "unauthorized", message)
  }
  public static func forbidden(_ message: String) -> APIFailure {
    APIFailure(.forbidden, "forbidden", message)
  }
  public static func notFound(_ message: String) -> APIFailure {
    APIFailure(.notFound, "not_found", message)
  }
  public static func tooLarge(_ message: String) -> APIFailure {
    APIFailure(.contentTooLarge, "too_large", message)
  }
  public static func limitExceeded(_ message: String) -> APIFailure {
    APIFailure(.unprocessableContent, "limit_exceeded", message)
  }
  /// 429 with `Retry-After`; `subject` says whose rate it is ("this API key", …).
  public static func rateLimited(retryAfter seconds: Int, subject: String = "this API key")
    -> APIFailure
  {
    APIFailure(
      .tooManyRequests, "rate_limited",
      "too many requests for \(subject); retry after \(seconds) s", retryAfter: seconds)
  }
  public static func unavailable(_ message: String) -> APIFailure {
    APIFailure(.serviceUnavailable, "unavailable", message)
  }

  public var httpStatus: HTTPResponse.Status { status }

  public var httpHeaderFields: HTTPFields {
    var fields = HTTPFields()
    fields[.contentType] = "application/json; charset=utf-8"
    if let retryAfter { fields[.retryAfter] = String(retryAfter) }
    return fields
  }

  public var httpBody: HTTPBody? {
    let body = ["error": code, "message": message]
    let data = (try? JSONSerialization.data(withJSONObject: body, options: [.sortedKeys])) ?? Data()
    return HTTPBody(Array(data))
  }
}
