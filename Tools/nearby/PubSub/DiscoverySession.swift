import Core
import Foundation
import LANMulticast
import Logging
import ServerResolver
import Strategy

/// What publish and subscribe set up the same way: the mediums (reported on stderr, or as
/// JSON lines), the resolver connection and the manager.
struct DiscoverySession {
  let manager: MessageManager
  let mediums: DiscoveryMediums
  let output: EventOutput
  let server: URL

  /// - Parameter mediums: the mediums to use instead of `--mediums` (BLE for beacons).
  static func start(
    _ options: DiscoveryOptions, label: String, mediums: DiscoveryMediums? = nil
  ) async throws -> DiscoverySession {
    let output = EventOutput(json: options.json)
    let logger = options.logger(label: label)
    let choice = try MediumCatalog.choose(
      try mediums ?? options.requestedMediums(), options: options.mediumOptions)
    for (kind, availability) in choice.report { output.medium(kind, availability) }
    let connection = try await ResolverConnection.resolve(
      server: options.resolver.server, apiKey: options.resolver.apiKey,
      allowInsecureHTTP: options.resolver.allowInsecureHTTP, note: output.note)
    let manager: MessageManager
    do {
      manager = try await MessageManager(
        apiKey: connection.apiKey,
        configuration: .init(
          resolver: .server(
            connection.url, allowsInsecureHTTP: options.resolver.allowInsecureHTTP, logger: logger),
          mediums: choice.providers,
          logger: logger))
    } catch ResolverError.invalidAPIKey {
      throw ExitFailure(
        "\(connection.url.absoluteString) refused the API key; pass a valid one with --api-key "
          + "or NEARBY_API_KEY (`nearby server keys list` shows the server's keys)",
        code: ExitCodes.noPermission)
    } catch let error as ResolverError {
      throw ExitFailure(
        "cannot register with \(connection.url.absoluteString): \(error)",
        code: ExitCodes.unavailable)
    } catch let error as LANMulticastError {
      throw ExitFailure("the LAN medium cannot start: \(error)", code: ExitCodes.unavailable)
    }
    output.note(
      "connected to \(connection.url.absoluteString) as device \(manager.deviceID)")
    return DiscoverySession(
      manager: manager, mediums: choice.kinds, output: output, server: connection.url)
  }

  /// The strategy from the options, on the chosen mediums.
  func strategy(_ options: DiscoveryOptions) throws -> Strategy {
    var strategy = try options.strategy()
    strategy.mediums = mediums
    return strategy
  }

  /// Forwards medium problems (an interface going down, say) to the output until cancelled.
  func followMediumErrors() -> Task<Void, Never> {
    let errors = manager.errors
    let output = output
    return Task {
      for await error in errors {
        output.note(
          error.isActive
            ? "\(error.medium): \(error.message)" : "\(error.medium): working again")
      }
    }
  }
}
