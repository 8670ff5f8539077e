import CommandLineSupport
import Logging
import NearbyServer
import ServerStorage
import ServiceLifecycle

/// A resolver server in the benchmark's own process on a free loopback port, with no rate
/// limit (the benchmarks measure the server, not its limiter).
struct BenchServer {
  let port: Int
  private let group: ServiceGroup
  private let serving: Task<Void, any Error>

  /// Starts serving `storage`; returns once the server listens.
  /// - Throws: ``CommandFailure`` when it does not start.
  static func start(storage: any ResolverStorage, logger: Logger) async throws -> BenchServer {
    var configuration = ResolverServerConfiguration()
    configuration.port = 0
    // Every limit lifted: the bench measures the work, from one address and a few devices.
    configuration.requestsPerSecond = 1e9
    configuration.burst = 1e9
    configuration.requestsPerSecondPerDevice = 1e9
    configuration.burstPerDevice = 1e9
    configuration.requestsPerSecondPerAddress = 1e9
    configuration.burstPerAddress = 1e9
    // The fleet's scripted reports name the tokens it was given at the start: they must
    // resolve for the whole run (15 min, the longest lifetime), not the default 2 min.
    configuration.resolution.tokenLifetime = .seconds(900)
    let server = ResolverServer(storage: storage, configuration: configuration, logger: logger)
    let (ports, portContinuation) = AsyncStream.makeStream(of: Int.self)
    let listening = ListeningServer(server: server, onListening: { portContinuation.yield($0) })
    let group = ServiceGroup(
      services: [listening], gracefulShutdownSignals: [], cancellationSignals: [], logger: logger)
    let serving = Task {
      defer { portContinuation.finish() }
      try await group.run()
    }
    var portIterator = ports.makeAsyncIterator()
    guard let port = await portIterator.next() else {
      serving.cancel()
      if case .failure(let error) = await serving.result {
        throw CommandFailure("the resolver server did not start: \(error)")
      }
      throw CommandFailure("the resolver server did not start")
    }
    return BenchServer(port: port, group: group, serving: serving)
  }

  /// Shuts the server down gracefully (open requests finish) and waits until it has.
  func stop() async {
    await group.triggerGracefulShutdown()
    _ = await serving.result
  }

  /// The server as a service that reports its port.
  private struct ListeningServer: Service {
    let server: ResolverServer
    let onListening: @Sendable (Int) async -> Void
    func run() async throws { try await server.run(onListening: onListening) }
  }
}
