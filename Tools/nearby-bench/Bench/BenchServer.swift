import CommandLineSupport
import Logging
import NearbyServer
import ServerStorage

/// A resolver server in the benchmark's own process on a free loopback port, with no rate
/// limit (the benchmarks measure the server, not its limiter).
struct BenchServer {
  let port: Int
  private let serving: Task<Void, any Error>

  /// Starts serving `storage`; returns once the server listens.
  /// - Throws: ``CommandFailure`` when it does not start.
  static func start(storage: any ResolverStorage, logger: Logger) async throws -> BenchServer {
    var configuration = ResolverServerConfiguration()
    configuration.port = 0
    configuration.requestsPerSecond = 1e9
    configuration.burst = 1e9
    let server = ResolverServer(storage: storage, configuration: configuration, logger: logger)
    let (ports, portContinuation) = AsyncStream.makeStream(of: Int.self)
    let serving = Task { try await server.run(onListening: { portContinuation.yield($0) }) }
    var portIterator = ports.makeAsyncIterator()
    guard let port = await portIterator.next() else {
      serving.cancel()
      throw CommandFailure("the resolver server did not start")
    }
    return BenchServer(port: port, serving: serving)
  }

  /// Stops the server and waits until it has.
  func stop() async {
    serving.cancel()
    _ = await serving.result
  }
}
