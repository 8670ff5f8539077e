@_spi(Resolver) import Core
import Foundation
import HTTPTypes
import Hummingbird
import Logging
import NIOCore
import NearbyTesting
import OpenAPIRuntime
@testable import ResolverClient
import Synchronization
import Testing
import TestSupport

/// What the server client refuses to do, whatever the server says: send its secrets over
/// plain HTTP across a network, read an answer or an event of any size, or call again before
/// a `Retry-After` has passed (issue 16).
@Suite("Client limits")
struct ClientLimitsTests {
  @Test func plainHTTPAcrossTheNetworkIsRefusedUnlessAllowed() async throws {
    func refusal(_ text: String, allowed: Bool = false) -> String? {
      var configuration = ResolverClient.Configuration(url: URL(string: text)!)
      configuration.allowsInsecureHTTP = allowed
      return configuration.insecureURLRefusal
    }
    #expect(refusal("http://10.1.2.3:7171")?.contains("https://") == true)
    #expect(refusal("http://resolver.example.com") != nil)
    #expect(refusal("http://127.0.0.2:7171") == nil)
    #expect(refusal("http://localhost:7171") == nil)
    #expect(refusal("http://[::1]:7171") == nil)
    #expect(refusal("http://127.evil.example") != nil)
    #expect(refusal("https://resolver.example.com") == nil)
    #expect(refusal("http://10.1.2.3:7171", allowed: true) == nil)

    // Registration fails before anything is sent: 192.0.2.1 is TEST-NET-1, where a connection
    // attempt would end in the connect timeout, in other words than the check's.
    let client = ResolverClient(
      configuration: .init(
        url: URL(string: "http://192.0.2.1:7171")!, credentialStore: InMemoryCredentialStore()))
    do {
      _ = try await client.register(apiKey: "nk_secret")
      Issue.record("registered over plain HTTP across the network")
    } catch let ResolverError.unavailable(why) {
      #expect(why.contains("refusing plain http://"), "\(why)")
    }
  }

  @Test func anAnswerOverTheLimitIsRefused() async throws {
    let router = Router()
    router.post("v1/devices") { _, _ in
      // A valid answer padded to 17 MiB.
      let padding = String(repeating: " ", count: 17 << 20)
      return Response(
        status: .created, headers: [.contentType: "application/json"],
        body: .init(
          byteBuffer: ByteBuffer(
            string: #"{"id":"\#(UUID().uuidString)","secret":"s"\#(padding)}"#)))
    }
    let (url, running) = try await serveOnLoopback(router)
    defer { running.cancel() }
    let client = ResolverClient(
      configuration: .init(url: url, credentialStore: InMemoryCredentialStore()))
    do {
      _ = try await client.register(apiKey: "nk_key")
      Issue.record("read a 17 MiB answer")
    } catch let ResolverError.unavailable(why) {
      #expect(why.contains("limit of 16777216 bytes"), "\(why)")
    }
  }

  @Test func anEventOverTheLimitEndsTheStream() async throws {
    func read(_ text: String, limit: Int) async throws -> Int {
      // In chunks of 7 bytes, as a network would cut it.
      let bytes = Array(text.utf8)
      let chunks = stride(from: 0, to: bytes.count, by: 7).map {
        ArraySlice(bytes[$0..<min($0 + 7, bytes.count)])
      }
      let (stream, continuation) = AsyncStream.makeStream(of: ArraySlice<UInt8>.self)
      for chunk in chunks { continuation.yield(chunk) }
      continuation.finish()
      let body = HTTPBody(stream, length: .unknown, iterationBehavior: .single)
      var iterator = LimitedBytes(base: body, limit: .event(limit)).makeAsyncIterator()
      var count = 0
      while let chunk = try await iterator.next() { count += chunk.count }
      return count
    }
    let small = "data: " + String(repeating: "x", count: 40) + "\n\n"
    // Many small events pass, however long the stream.
    #expect(try await read(String(repeating: small, count: 100), limit: 64) == small.count * 100)
    let crlf = small.replacingOccurrences(of: "\n", with: "\r\n")
    #expect(try await read(String(repeating: crlf, count: 10), limit: 64) == crlf.utf8.count * 10)
    // One event over the limit (no blank line in 65 bytes) ends it.
    await #expect(throws: ResponseTooLarge.self) {
      _ = try await read(small + "data: " + String(repeating: "y", count: 100) + "\n\n", limit: 64)
    }
  }

  @Test func retryAfterIsWaitedOut() async throws {
    let hits = Mutex(0)
    let router = Router()
    router.post("v1/devices") { _, _ in
      hits.withLock { $0 += 1 }
      return Response(
        status: .tooManyRequests,
        headers: [.contentType: "application/json", .retryAfter: "30"],
        body: .init(
          byteBuffer: ByteBuffer(string: #"{"error":"rate_limited","message":"slow down"}"#)))
    }
    let (url, running) = try await serveOnLoopback(router)
    defer { running.cancel() }
    let clock = ManualClock()
    var configuration = ResolverClient.Configuration(
      url: url, credentialStore: InMemoryCredentialStore())
    configuration.clock = clock
    let client = ResolverClient(configuration: configuration)
    await #expect(throws: ResolverError.self) { _ = try await client.register(apiKey: "nk_key") }
    #expect(hits.withLock { $0 } == 1)
    // Asked again at once: refused here, the server never hears of it.
    do {
      _ = try await client.register(apiKey: "nk_key")
      Issue.record("registered while rate limited")
    } catch let ResolverError.unavailable(why) {
      #expect(why.contains("asked to wait"), "\(why)")
    }
    #expect(hits.withLock { $0 } == 1)
    #expect(await client.retryDelay == .seconds(30))
    // A second short of the wait, still refused; once it has passed, the call goes out.
    clock.advance(by: .seconds(29))
    #expect(await client.retryDelay == .seconds(1))
    await #expect(throws: ResolverError.self) { _ = try await client.register(apiKey: "nk_key") }
    #expect(hits.withLock { $0 } == 1)
    clock.advance(by: .seconds(1))
    await #expect(throws: ResolverError.self) { _ = try await client.register(apiKey: "nk_key") }
    #expect(hits.withLock { $0 } == 2)
  }
}
