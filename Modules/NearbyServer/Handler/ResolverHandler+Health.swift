import OpenAPIRuntime
import ResolverAPI

extension ResolverHandler {
  func health(_ input: Operations.Health.Input) async throws -> Operations.Health.Output {
    let database = storage.description.hasPrefix("sqlite") ? "sqlite" : "postgres"
    if let problem = health.problem {
      return .serviceUnavailable(
        .init(body: .json(.init(error: "unavailable", message: problem))))
    }
    return .ok(.init(body: .json(.init(status: .ok, database: database))))
  }

  func metrics(_ input: Operations.Metrics.Input) async throws -> Operations.Metrics.Output {
    .ok(.init(body: .plainText(HTTPBody(metrics.exposition()))))
  }
}
