import Core
import Logging
import ResolverAPI

// Error mapping: the server's error answers become ``Core/ResolverError``s.

extension ResolverClient {
  static func message(_ answer: some ErrorAnswer) -> String {
    (try? answer.errorBody.message) ?? "no message"
  }
}

/// The error responses of the generated client, which all carry openapi.yaml's `Error`.
protocol ErrorAnswer {
  var errorBody: Components.Schemas._Error { get throws }
}

extension Components.Responses.Unauthorized: ErrorAnswer {
  var errorBody: Components.Schemas._Error { get throws { try body.json } }
}
extension Components.Responses.TooManyRequests: ErrorAnswer {
  var errorBody: Components.Schemas._Error { get throws { try body.json } }
}
extension Components.Responses.BadRequest: ErrorAnswer {
  var errorBody: Components.Schemas._Error { get throws { try body.json } }
}
extension Components.Responses.Unprocessable: ErrorAnswer {
  var errorBody: Components.Schemas._Error { get throws { try body.json } }
}
extension Components.Responses.TooLarge: ErrorAnswer {
  var errorBody: Components.Schemas._Error { get throws { try body.json } }
}

extension ResolverError {
  func logged(_ answer: some ErrorAnswer, _ logger: Logger) -> ResolverError {
    logger.warning(
      "the server refused the API key", metadata: ["message": "\(ResolverClient.message(answer))"])
    return self
  }
}
