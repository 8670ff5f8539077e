@_spi(Resolver) import Core
import Foundation
import Hummingbird
import Logging
import ResolverClient
import ServiceLifecycle
import Synchronization
import Testing
import TestSupport

/// The client never follows a redirect: its API key and device secret go to the server it
/// was configured with, and nowhere else.
@Suite("Client redirects")
struct RedirectTests {
  @Test func aRedirectIsNotFollowedWithTheKey() async throws {
    let server = try await ServerHarness.start()
    try await withShutdown(server) { server in
      // A server that sends every request on to the real one.
      let router = Router()
      router.post("v1/devices") { _, _ in
        Response(
          status: .temporaryRedirect,
          headers: [.location: server.url.absoluteString + "/v1/devices"])
      }
      let (redirector, running) = try await serveOnLoopback(router)
      defer { running.cancel() }
      let client = ResolverClient(
        configuration: .init(url: redirector, credentialStore: InMemoryCredentialStore()))
      await #expect(throws: ResolverError.self) {
        _ = try await client.register(apiKey: server.apiKey)
      }
      // Nothing reached the real server with the key.
      let devices = try await server.storage.read { store in try store.resolution.counts().devices }
      #expect(devices == 0)
    }
  }
}
