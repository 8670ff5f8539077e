import BLEBlueZ
import Core
import Foundation
import LANMulticast
import Logging
import PeerResolution
import Resolution

/// What `--resolver peer` runs on: a peer resolver over the LAN transport (who-has to the
/// group on the interface of the LAN medium, answers to a port of its own) and, when the BLE
/// medium runs, the GATT transport (the advertiser of a token heard over BLE is asked over a
/// Bluetooth connection: no network needed), and the project key that seals the exchange.
///
/// The key is `--api-key`, else `$NEARBY_API_KEY`, else ``defaultProjectKey``: devices of one
/// project share the key text (no server issues it), and every `nearby` run with no key is in
/// one open project.
struct PeerConnection {
  /// The key of the open project every keyless `nearby publish`/`subscribe` joins. It is
  /// public (it is written here), so what is published under it is readable by anyone running
  /// `nearby` on the segment; a project's own key text keeps its messages to its devices.
  static let defaultProjectKey = "nearby-open-project"

  let resolver: PeerResolver
  let apiKey: String
  /// Where the key came from, for the start note.
  let keySource: String
  /// The transports, for the start note.
  let description: String
  let hasLAN: Bool
  let hasGATT: Bool

  /// The project key and where it came from: `--api-key`, else `$NEARBY_API_KEY`, else
  /// ``defaultProjectKey``.
  static func projectKey(apiKey: String?) -> (key: String, source: String) {
    if let apiKey { return (apiKey, "--api-key") }
    if let key = ProcessInfo.processInfo.environment["NEARBY_API_KEY"], !key.isEmpty {
      return (key, "NEARBY_API_KEY")
    }
    return (defaultProjectKey, "the open default key (pass --api-key to keep to your project)")
  }

  /// The LAN medium's key in peer mode: derived from the project key, so that only the
  /// project's devices can announce a token or name a way back (with the open default key,
  /// anyone running nearby can: that project is open).
  static func announcementKey(apiKey: String?) -> LANMulticastKey {
    // 32 derived bytes: over the minimum, so this cannot throw.
    try! LANMulticastKey(bytes: PeerKeys(apiKey: projectKey(apiKey: apiKey).key).announcementKey)
  }

  /// Opens the LAN transport.
  /// - Throws: ``ExitFailure`` 69 when it cannot open (a port in use, an unknown interface,
  ///   no network at all).
  static func openLAN(peer: PeerOptions, medium: MediumOptions) throws -> (
    LANPeerTransport, String
  ) {
    // Peer resolution's transport is IPv4: an IPv6 --lan-group leaves it on the default group.
    let group =
      medium.lanGroup.contains(":") ? LANMulticastConfiguration.defaultIPv4Group : medium.lanGroup
    let configuration = LANPeerConfiguration(
      group: group, groupPort: UInt16(clamping: peer.peerGroupPort),
      interface: medium.lanInterfaceName)
    try checkInterface(medium)
    do {
      let transport = try LANPeerTransport(configuration: configuration)
      return (
        transport,
        "LAN: who-has on \(group):\(configuration.groupPort) via "
          + "\(medium.lanInterfaceName ?? "the routing table's interface"), answers to UDP port "
          + "\(transport.port)"
      )
    } catch {
      throw ExitFailure(
        "peer resolution cannot open its LAN transport (\(group):\(configuration.groupPort)): "
          + "\(error); free the port, pick another with --peer-group-port, or use "
          + "--resolver local", code: ExitCodes.unavailable)
    }
  }

  /// - Throws: ``ExitFailure`` 69 when `--lan-interface` names an interface this host lacks.
  static func checkInterface(_ medium: MediumOptions) throws {
    if let name = medium.lanInterfaceName, !NetworkInterfaces.exists(name) {
      throw ExitFailure(
        "peer resolution needs the LAN: no network interface \"\(name)\"; interfaces here: "
          + NetworkInterfaces.names().joined(separator: ", "), code: ExitCodes.unavailable)
    }
  }

  /// Opens the GATT transport on the BLE medium's adapter.
  /// - Throws: ``ExitFailure`` 69 naming what bluetoothd said.
  static func openGATT(medium: MediumOptions, logger: Logger) async throws -> (
    BlueZPeerTransport, String
  ) {
    do {
      let transport = try await BlueZPeerTransport(
        configuration: .init(bluez: BlueZConfiguration(adapter: medium.bleAdapter)),
        logger: logger)
      return (transport, "BLE: GATT service on \(medium.bleAdapter ?? "the first powered adapter")")
    } catch {
      throw ExitFailure(
        "peer resolution cannot serve its GATT service through bluetoothd: \(error)",
        code: ExitCodes.unavailable)
    }
  }

  /// Makes the resolver, which owns the transports from now on.
  /// - Throws: ``ExitFailure`` 64 for a configuration out of range.
  static func make(
    apiKey: String?, peer: PeerOptions, transports: [(any PeerTransport, String)],
    logger: Logger
  ) async throws -> PeerConnection {
    let (key, source) = projectKey(apiKey: apiKey)
    let lostAfter = Duration.milliseconds(Int64((peer.lostAfter ?? 10) * 1000))
    var exchange = PeerExchangeStateMachine.Configuration()
    // Refresh well under lostAfter, so a still device stays found.
    exchange.refreshInterval = min(exchange.refreshInterval, lostAfter / 3)
    let resolver: PeerResolver
    do {
      resolver = try PeerResolver(
        transports: transports.map(\.0),
        configuration: PeerResolverConfiguration(
          resolution: ResolutionConfiguration(lostAfter: lostAfter), exchange: exchange),
        logger: logger)
    } catch {
      for (transport, _) in transports { await transport.shutdown() }
      throw ExitFailure("peer resolution: \(error)", code: ExitCodes.usage)
    }
    return PeerConnection(
      resolver: resolver, apiKey: key, keySource: source,
      description: transports.map(\.1).joined(separator: "; "),
      hasLAN: transports.contains { $0.0.kind == LANPeerAddress.kind },
      hasGATT: transports.contains { $0.0.kind == BLEPeerAddress.kind })
  }
}
