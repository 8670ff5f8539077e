import Core
import Foundation
import LANMulticast
import Logging
import PeerResolution
import ResolverClient
import Strategy

/// What publish and subscribe set up the same way: the resolver (peer resolution, a server,
/// or the local server), the mediums (reported on stderr, or as JSON lines) and the manager.
struct DiscoverySession {
  let manager: MessageManager
  let mediums: DiscoveryMediums
  let output: EventOutput
  /// The peer resolver in peer mode, whose counters ``shutdown()`` reports.
  var peerResolver: PeerResolver? = nil
  /// The project key: the peer project's in peer mode, the server's API key otherwise.
  var projectKey: String
  /// The resolver server's URL, when there is one.
  var serverURL: URL? = nil

  /// - Parameters:
  ///   - mediums: the mediums to use instead of `--mediums` (BLE for beacons).
  ///   - beacons: whether the command subscribes to beacons (their default resolver is the
  ///     local server).
  static func start(
    _ options: DiscoveryOptions, label: String, mediums: DiscoveryMediums? = nil,
    beacons: Bool = false
  ) async throws -> DiscoverySession {
    let output = EventOutput(json: options.json)
    let logger = options.logger(label: label)
    let (mode, server) = try options.resolverMode(beacons: beacons)
    var mediumOptions = options.mediumOptions
    if mode == .peer {
      // A --lan-interface that does not exist is the user's to fix: said at once.
      try PeerConnection.checkInterface(mediumOptions)
      mediumOptions.lanKey = PeerConnection.announcementKey(apiKey: options.resolver.apiKey)
    }
    let choice = try MediumCatalog.choose(
      try mediums ?? options.requestedMediums(), options: mediumOptions)
    for (kind, availability) in choice.report { output.medium(kind, availability) }
    if mode == .peer {
      let (peer, providers) = try await PeerConnection.assemble(
        apiKey: options.resolver.apiKey, peer: options.peer, medium: mediumOptions,
        choice: choice, note: output.note, logger: logger)
      return try await startPeer(
        peer, mediums: providers, choice: choice, output: output, logger: logger)
    }
    let connection = try await ResolverConnection.resolve(
      server: mode == .server ? server : nil, apiKey: options.resolver.apiKey,
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
      manager: manager, mediums: choice.kinds, output: output, projectKey: connection.apiKey,
      serverURL: connection.url)
  }

  /// A manager on peer resolution: no server; tokens heard on the LAN are asked of their
  /// sender, tokens heard on BLE of their advertiser over GATT (or by a who-has on the LAN
  /// when GATT is off), tokens heard on audio by a who-has on the LAN.
  private static func startPeer(
    _ peer: PeerConnection, mediums: [MediumProvider], choice: MediumCatalog.Choice,
    output: EventOutput, logger: Logger
  ) async throws -> DiscoverySession {
    let manager: MessageManager
    do {
      manager = try await MessageManager(
        apiKey: peer.apiKey,
        configuration: .init(
          resolver: .peer(peer.resolver), mediums: mediums, logger: logger))
    } catch let error as LANMulticastError {
      await peer.resolver.shutdown()
      throw ExitFailure("the LAN medium cannot start: \(error)", code: ExitCodes.unavailable)
    } catch {
      await peer.resolver.shutdown()
      throw ExitFailure("cannot start peer resolution: \(error)", code: ExitCodes.unavailable)
    }
    output.note(
      "connected to peers (no server) as device \(manager.deviceID); "
        + "project key: \(peer.keySource); \(peer.description)")
    if !peer.hasLAN, choice.kinds.contains(.audio) {
      output.note(
        "no LAN transport: tokens heard over audio cannot be asked of their owners (a who-has "
          + "needs the LAN)")
    } else if !choice.kinds.contains(.lan), !peer.hasGATT || choice.kinds.contains(.audio) {
      output.note(
        "the LAN medium is off: tokens heard on \(choice.kinds) are still resolved over the "
          + "LAN by who-has\(peer.hasGATT ? " (BLE ones over GATT)" : ""), so the devices need a "
          + "network in common")
    }
    return DiscoverySession(
      manager: manager, mediums: choice.kinds, output: output, peerResolver: peer.resolver,
      projectKey: peer.apiKey)
  }

  /// Shuts the manager down (unregistering: peers and the server learn at once) and, in peer
  /// mode, notes what the peer resolver received, dropped and sent.
  func shutdown() async {
    await manager.shutdown()
    guard let peerResolver else { return }
    // Sends what is queued (the unpublish's and unregister's updates) and closes the
    // transports; the GATT transport first lets connected hearers read what waits for them.
    await peerResolver.shutdown()
    let counters = await peerResolver.counters()
    output.note(
      "peer resolution: received \(counters.received), accepted \(counters.accepted), "
        + "ignored \(counters.ignored), dropped \(counters.dropped) (malformed "
        + "\(counters.droppedMalformed), other project \(counters.droppedOtherProject), "
        + "unauthenticated \(counters.droppedUnauthenticated), stale \(counters.droppedStale), "
        + "replayed \(counters.droppedReplayed), rate limited \(counters.droppedRateLimited), "
        + "host rate limited \(counters.droppedHostRateLimited), "
        + "oversized \(counters.droppedOversized)); challenged \(counters.challenged), probes "
        + "\(counters.probes), who-has \(counters.whoHasSent); sent \(counters.sent), refused sends \(counters.refusedSends), "
        + "send failures \(counters.sendFailures)")
  }

  /// The strategy from the options, on the chosen mediums.
  func strategy(_ options: DiscoveryOptions) throws -> Strategy {
    var strategy = try options.strategy()
    strategy.mediums = mediums
    // Phones that cannot hear the box type its code (--web shows it): such a sighting counts
    // only on a medium both sides' strategies name.
    if options.web.web { strategy.mediums.insert(.optical) }
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
