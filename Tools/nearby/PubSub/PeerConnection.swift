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

  /// - Throws: ``ExitFailure`` 69 when `--lan-interface` names an interface this host lacks.
  static func checkInterface(_ medium: MediumOptions) throws {
    if let name = medium.lanInterfaceName, !NetworkInterfaces.exists(name) {
      throw ExitFailure(
        "peer resolution needs the LAN: no network interface \"\(name)\"; interfaces here: "
          + NetworkInterfaces.names().joined(separator: ", "), code: ExitCodes.unavailable)
    }
  }

  /// Opens peer resolution's transports with the chosen mediums that carry them (one call:
  /// `PeerResolver.assemble`): the LAN transport always (its medium, announcing the
  /// transport's port, when the LAN medium runs), GATT when the BLE medium runs (its advert
  /// connectable). A LAN transport that cannot open is fatal when the LAN medium runs or
  /// nothing else carries; a GATT transport that cannot open is noted when the LAN carries.
  /// - Returns: the connection and the mediums to give the manager.
  /// - Throws: ``ExitFailure`` 69 naming the transport that cannot open and the fix; 64 for a
  ///   configuration out of range.
  static func assemble(
    apiKey: String?, peer: PeerOptions, medium: MediumOptions, choice: MediumCatalog.Choice,
    note: (String) -> Void, logger: Logger
  ) async throws -> (PeerConnection, [MediumProvider]) {
    let (key, source) = projectKey(apiKey: apiKey)
    // Peer resolution's transport is IPv4: an IPv6 --lan-group leaves it on the default group.
    let group =
      medium.lanGroup.contains(":") ? LANMulticastConfiguration.defaultIPv4Group : medium.lanGroup
    let lanTransport = LANPeerConfiguration(
      group: group, groupPort: UInt16(clamping: peer.peerGroupPort),
      interface: medium.lanInterfaceName)
    var carriers = [
      PeerCarrier.lan(
        medium: choice.kinds.contains(.lan) ? medium.lanConfiguration : nil,
        transport: lanTransport)
    ]
    if choice.kinds.contains(.ble) {
      carriers.append(.bluez(.init(bluez: BlueZConfiguration(adapter: medium.bleAdapter))))
    }
    func failure(_ carrier: String, _ error: any Error) -> ExitFailure {
      carrier == "lan"
        ? ExitFailure(
          "peer resolution cannot open its LAN transport (\(group):\(lanTransport.groupPort)): "
            + "\(error); free the port, pick another with --peer-group-port, or use "
            + "--resolver local", code: ExitCodes.unavailable)
        : ExitFailure(
          "peer resolution cannot serve its GATT service through bluetoothd: \(error)",
          code: ExitCodes.unavailable)
    }
    let lostAfter = Duration.milliseconds(Int64((peer.lostAfter ?? 10) * 1000))
    var exchange = PeerExchangeStateMachine.Configuration()
    // Refresh well under lostAfter, so a still device stays found.
    exchange.refreshInterval = min(exchange.refreshInterval, lostAfter / 3)
    let assembly: PeerAssembly
    do {
      assembly = try await PeerResolver.assemble(
        carriers, otherMediums: choice.providers(except: [.lan, .ble]),
        configuration: PeerResolverConfiguration(
          resolution: ResolutionConfiguration(lostAfter: lostAfter), exchange: exchange),
        logger: logger)
    } catch let error as PeerAssemblyError {
      // Nothing carries: the last transport tried says why (GATT when BLE runs).
      guard let last = error.failures.last else { throw error }
      throw failure(last.carrier, last.error)
    } catch {
      throw ExitFailure("peer resolution: \(error)", code: ExitCodes.usage)
    }
    for failed in assembly.failures {
      if failed.carrier == "lan", choice.kinds.contains(.lan) {
        await assembly.resolver.shutdown()
        throw failure(failed.carrier, failed.error)
      }
      note(
        "\(failure(failed.carrier, failed.error).description); "
          + (failed.carrier == "lan"
            ? "tokens are asked over GATT only"
            : "tokens heard over BLE are asked on the LAN instead"))
    }
    let connection = PeerConnection(
      resolver: assembly.resolver, apiKey: key, keySource: source,
      description: assembly.descriptions.joined(separator: "; "),
      hasLAN: assembly.opened("lan"), hasGATT: assembly.opened("ble"))
    return (connection, assembly.mediums)
  }
}
