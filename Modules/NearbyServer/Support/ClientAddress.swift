import Hummingbird
import NIOCore

/// The address a request came from (its TCP peer; a proxy in front of the server makes every
/// request come from the proxy), for the limits kept per address.
struct ClientAddress: Sendable, Hashable {
  /// The peer's IP address as text, or "unknown".
  var text: String

  @TaskLocal static var current = ClientAddress(text: "unknown")
}

/// Hummingbird's request context with the connection's peer address.
struct AddressedRequestContext: Hummingbird.RequestContext, RemoteAddressRequestContext {
  var coreContext: CoreRequestContextStorage
  let remoteAddress: SocketAddress?

  init(source: Source) {
    coreContext = .init(source: source)
    remoteAddress = source.channel.remoteAddress
  }
}

/// Makes the request's peer address ``ClientAddress/current`` for the handlers and the
/// OpenAPI middlewares after it.
struct ClientAddressMiddleware: RouterMiddleware {
  typealias Context = AddressedRequestContext

  func handle(
    _ request: Request, context: Context, next: (Request, Context) async throws -> Response
  ) async throws -> Response {
    let address = ClientAddress(text: context.remoteAddress?.ipAddress ?? "unknown")
    return try await ClientAddress.$current.withValue(address) {
      try await next(request, context)
    }
  }
}
