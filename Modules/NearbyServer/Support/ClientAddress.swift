import Foundation
import HTTPTypes
import Hummingbird
import NIOCore

/// The address a request came from (its TCP peer; a proxy in front of the server makes every
/// request come from the proxy), for the limits kept per address.
struct ClientAddress: Sendable, Hashable {
  /// The peer's IP address as text, or "unknown".
  var text: String

  @TaskLocal static var current = ClientAddress(text: "unknown")
}

/// Hummingbird's request context with the connection's peer address, and the connection
/// (whose body deadline authentication extends: ``RequestBodyDeadline``).
struct AddressedRequestContext: Hummingbird.RequestContext, RemoteAddressRequestContext {
  var coreContext: CoreRequestContextStorage
  let remoteAddress: SocketAddress?
  let channel: any Channel

  init(source: Source) {
    coreContext = .init(source: source)
    remoteAddress = source.channel.remoteAddress
    channel = source.channel
  }
}

/// Makes the request's client address ``ClientAddress/current`` for the handlers and the
/// OpenAPI middlewares after it: the peer's, or for a request from a trusted proxy, the last
/// address in `X-Forwarded-For` that is not a trusted proxy. Makes its connection
/// ``RequestBodyDeadline/current``, for whoever authenticates the request.
struct ClientAddressMiddleware: RouterMiddleware {
  typealias Context = AddressedRequestContext
  static let forwardedFor = HTTPField.Name("X-Forwarded-For")!

  let trustedProxies: Set<String>

  func handle(
    _ request: Request, context: Context, next: (Request, Context) async throws -> Response
  ) async throws -> Response {
    let address = ClientAddress(
      text: Self.client(
        peer: context.remoteAddress?.ipAddress ?? "unknown",
        forwardedFor: request.headers[values: Self.forwardedFor], trusted: trustedProxies))
    return try await ClientAddress.$current.withValue(address) {
      try await RequestBodyDeadline.$current.withValue(.init(channel: context.channel)) {
        try await next(request, context)
      }
    }
  }

  /// The client's address: `peer`, unless it is trusted; then the rightmost forwarded address
  /// that is not trusted (a client can write anything to the left of what its proxy adds).
  static func client(peer: String, forwardedFor: [String], trusted: Set<String>) -> String {
    guard trusted.contains(peer) else { return peer }
    let hops = forwardedFor.flatMap { $0.split(separator: ",") }
      .map { $0.trimmingCharacters(in: .whitespaces) }.filter { !$0.isEmpty && $0.count <= 64 }
    return hops.last { !trusted.contains($0) } ?? peer
  }
}
