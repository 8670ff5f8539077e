import Foundation
import HTTPTypes
import OpenAPIRuntime

struct ID: Sendable {
  var bits: UInt128
  var description: String { String(bits, radix: 16) }
}
struct DeviceCredentials: Sendable {
  var id: ID
  var secret: String
}
enum ResolverError: Error { case unavailable(String) }

func trace(_ s: String) { FileHandle.standardError.write(Data((s + "\n").utf8)) }

struct RequestAuthentication: Sendable {
  var apiKey: String
  var deviceSecret: String?
  @TaskLocal static var current: RequestAuthentication?
}

struct Refused: Error {}
struct FailingTransport: ClientTransport {
  func send(_ request: HTTPRequest, body: HTTPBody?, baseURL: URL, operationID: String) async throws
    -> (HTTPResponse, HTTPBody?)
  {
    await Task.yield()
    throw Refused()
  }
}

actor ServerResolver {
  let url: URL
  private let client: Client
  private var apiKey = "key"

  init(url: URL) {
    self.url = url
    client = Client(
      serverURL: url,
      transport: FailingTransport())
  }

  func streamOnce(_ device: DeviceCredentials) async throws {
    let lastEventID: String? = nil
    trace("streamOnce: calling")
    let output = try await call(secret: device.secret) {
      try await $0.events(
        path: .init(id: device.id.description), headers: .init(lastEventID: lastEventID))
    }
    switch output {
    case .ok: trace("streamOnce: ok")
    default: trace("streamOnce: other")
    }
  }

  private func call<Output>(
    secret: String?, using client: Client? = nil, _ body: @Sendable (Client) async throws -> Output
  ) async throws -> Output {
    let client = client ?? self.client
    let authentication = RequestAuthentication(apiKey: apiKey, deviceSecret: secret)
    do {
      return try await RequestAuthentication.$current.withValue(authentication) {
        try await body(client)
      }
    } catch {
      throw ResolverError.unavailable("x")
    }
  }
}

let resolver = ServerResolver(url: URL(string: "http://127.0.0.1:7555")!)
do {
  try await resolver.streamOnce(
    DeviceCredentials(id: ID(bits: 0x8f6a_1e0b_4c2d_4e8f_9a1b_2c3d_4e5f_6a7b), secret: "secret"))
  trace("done: no error")
} catch {
  trace("done: \(error)")  // expected: done: unavailable("x")
}
