import Core
import Foundation
import LANMulticast
import Logging
import PeerResolution
import Resolution

/// What `--resolver peer` runs on: a LAN peer transport (who-has to the group on the
/// interface of the LAN medium, answers to a port of its own) under a peer resolver, and the
/// project key that seals the exchange.
///
/// The key is `--api-key`, else `$NEARBY_API_KEY`, else ``defaultProjectKey``: devices of one
/// project share the key text (no server issues it), and every `nearby` run with no key is in
/// one open project.
struct PeerConnection {
  /// The key of the open project every keyless `nearby publish`/`subscribe` joins. It is
  /// public (it is written here), so what is published under it is readable by anyone running
  /// `nearby` on the segment; a project's own key text keeps its messages to its devices.
  static let defaultProjectKey = "nearby-open-project"

  let transport: LANPeerTransport
  let resolver: PeerResolver
  let apiKey: String
  /// Where the key came from, for the start note.
  let keySource: String
  /// The who-has group and port, and the interface, for the start note.
  let description: String

  /// Opens the transport and makes the resolver, which owns the transport from now on.
  /// - Throws: ``ExitFailure`` 69 when the transport cannot open (a port in use, an unknown
  ///   interface), 64 for a configuration out of range.
  static func open(
    apiKey: String?, peer: PeerOptions, medium: MediumOptions, logger: Logger
  ) throws -> PeerConnection {
    let environment = ProcessInfo.processInfo.environment
    let (key, source): (String, String) =
      if let apiKey {
        (apiKey, "--api-key")
      } else if let key = environment["NEARBY_API_KEY"], !key.isEmpty {
        (key, "NEARBY_API_KEY")
      } else {
        (defaultProjectKey, "the open default key (pass --api-key to keep to your project)")
      }
    // Peer resolution's transport is IPv4: an IPv6 --lan-group leaves it on the default group.
    let group =
      medium.lanGroup.contains(":") ? LANMulticastConfiguration.defaultIPv4Group : medium.lanGroup
    let configuration = LANPeerConfiguration(
      group: group, groupPort: UInt16(clamping: peer.peerGroupPort),
      interface: medium.lanInterfaceName)
    if let name = medium.lanInterfaceName, !NetworkInterfaces.exists(name) {
      throw ExitFailure(
        "peer resolution needs the LAN: no network interface \"\(name)\"; interfaces here: "
          + NetworkInterfaces.names().joined(separator: ", "), code: ExitCodes.unavailable)
    }
    let transport: LANPeerTransport
    do {
      transport = try LANPeerTransport(configuration: configuration)
    } catch {
      throw ExitFailure(
        "peer resolution cannot open its LAN transport (\(group):\(configuration.groupPort)): "
          + "\(error); free the port, pick another with --peer-group-port, or use "
          + "--resolver local", code: ExitCodes.unavailable)
    }
    let lostAfter = Duration.milliseconds(Int64((peer.lostAfter ?? 10) * 1000))
    var exchange = PeerExchangeStateMachine.Configuration()
    // Refresh well under lostAfter, so a still device stays found.
    exchange.refreshInterval = min(exchange.refreshInterval, lostAfter / 3)
    let resolver: PeerResolver
    do {
      resolver = try PeerResolver(
        transports: [transport],
        configuration: PeerResolverConfiguration(
          resolution: ResolutionConfiguration(lostAfter: lostAfter), exchange: exchange),
        logger: logger)
    } catch {
      throw ExitFailure("peer resolution: \(error)", code: ExitCodes.usage)
    }
    return PeerConnection(
      transport: transport, resolver: resolver, apiKey: key, keySource: source,
      description:
        "who-has on \(group):\(configuration.groupPort) via "
        + "\(medium.lanInterfaceName ?? "the routing table's interface"), answers to UDP port "
        + "\(transport.port)")
  }
}
