import Foundation
import HTTPTypes
import OpenAPIRuntime

/// Bounds what a server may make the client hold: an answer's body is cut off (an error) past
/// `maximumBytes`, and an event stream's events past `maximumEventBytes` each (the stream
/// itself may run for days). A hostile or broken server cannot grow the client's memory.
struct ResponseLimitMiddleware: ClientMiddleware {
  enum Limit: Sendable {
    /// At most this many bytes in all.
    case body(Int)
    /// At most this many bytes between two event boundaries (a blank line).
    case event(Int)
  }

  let limit: Limit

  func intercept(
    _ request: HTTPRequest, body: HTTPBody?, baseURL: URL, operationID: String,
    next: @Sendable (HTTPRequest, HTTPBody?, URL) async throws -> (HTTPResponse, HTTPBody?)
  ) async throws -> (HTTPResponse, HTTPBody?) {
    let (response, answer) = try await next(request, body, baseURL)
    guard let answer else { return (response, nil) }
    if case .body(let maximum) = limit, case .known(let length) = answer.length {
      guard length <= maximum else { throw ResponseTooLarge(limit: limit) }
    }
    return (
      response,
      HTTPBody(
        LimitedBytes(base: answer, limit: limit), length: answer.length,
        iterationBehavior: answer.iterationBehavior)
    )
  }
}

/// A server's answer (or one of its events) went past the client's limit.
struct ResponseTooLarge: Error, CustomStringConvertible {
  let limit: ResponseLimitMiddleware.Limit

  var description: String {
    switch limit {
    case .body(let bytes): "the server's answer is over the client's limit of \(bytes) bytes"
    case .event(let bytes): "an event from the server is over the client's limit of \(bytes) bytes"
    }
  }
}

/// The bytes of a body, counted as they pass.
struct LimitedBytes: AsyncSequence, Sendable {
  typealias Element = ArraySlice<UInt8>

  let base: HTTPBody
  let limit: ResponseLimitMiddleware.Limit

  struct AsyncIterator: AsyncIteratorProtocol {
    var base: HTTPBody.AsyncIterator
    let limit: ResponseLimitMiddleware.Limit
    var count = 0
    var lastWasNewline = false

    mutating func next() async throws -> ArraySlice<UInt8>? {
      guard let chunk = try await base.next() else { return nil }
      switch limit {
      case .body(let maximum):
        count += chunk.count
        if count > maximum { throw ResponseTooLarge(limit: limit) }
      case .event(let maximum):
        for byte in chunk {
          if byte == UInt8(ascii: "\n") {
            if lastWasNewline { count = 0 }
            lastWasNewline = true
          } else if byte != UInt8(ascii: "\r") {
            lastWasNewline = false
          }
          count += 1
          if count > maximum { throw ResponseTooLarge(limit: limit) }
        }
      }
      return chunk
    }
  }

  func makeAsyncIterator() -> AsyncIterator {
    AsyncIterator(base: base.makeAsyncIterator(), limit: limit)
  }
}
