import ArgumentParser
import Foundation
import LANMulticast
import Logging
import Strategy

/// What the medium probes and factories need from the command line and the environment.
struct MediumOptions: Sendable {
  /// `--lan-interface`, else `NEARBY_LAN_INTERFACE`, else `nil` (the kernel's choice).
  var lanInterfaceName: String?
  var lanPort: UInt16
  var lanGroup: String
  /// `--ble-adapter`: the BlueZ adapter (`hci0`…) of the BLE medium; `nil`: the first powered.
  var bleAdapter: String? = nil
  /// The LAN medium's key (peer mode: derived from the project key), or `nil`: unkeyed.
  var lanKey: LANMulticastKey? = nil

  var lanConfiguration: LANMulticastConfiguration {
    LANMulticastConfiguration(
      group: lanGroup, port: lanPort, interface: lanInterfaceName, sharedKey: lanKey)
  }
}

/// The options `nearby publish` and `nearby subscribe` share.
struct DiscoveryOptions: ParsableArguments {
  @OptionGroup var resolver: ResolverOptions
  @OptionGroup var peer: PeerOptions
  @OptionGroup var web: WebOptions

  @Option(
    help: ArgumentHelp(
      "Mediums, comma-separated: ble, audio, lan (default: every one this machine has).",
      valueName: "list"))
  var mediums: String?

  @Option(
    help: ArgumentHelp(
      "broadcast, scan, or both comma-separated (default: both).", valueName: "list"))
  var mode = "broadcast,scan"

  @Option(
    help: ArgumentHelp(
      "Seconds to stay active (up to 86400), or 'infinite' (the default: until Ctrl-C).",
      valueName: "seconds"))
  var ttl = "infinite"

  @Option(
    help: ArgumentHelp(
      "The network interface of the LAN medium (default: $NEARBY_LAN_INTERFACE, else the routing table's choice).",
      valueName: "name"))
  var lanInterface: String?

  @Option(help: ArgumentHelp("The UDP port of the LAN medium.", valueName: "port"))
  var lanPort: Int = Int(LANMulticastConfiguration.defaultPort)

  @Option(
    help: ArgumentHelp(
      "The LAN medium's multicast group: IPv4, or IPv6 such as \(LANMulticastConfiguration.defaultIPv6Group).",
      valueName: "address"))
  var lanGroup = LANMulticastConfiguration.defaultIPv4Group

  @Option(
    help: ArgumentHelp(
      "The Bluetooth adapter of the BLE medium, such as hci1 (default: the first powered one; `nearby ble status` lists them).",
      valueName: "hciN"))
  var bleAdapter: String?

  @Flag(help: "Print one JSON object a line (for scripts) instead of the live view.")
  var json = false

  @Option(help: "Log level on stderr: trace, debug, info, notice, warning, error, critical.")
  var logLevel = "warning"

  func validate() throws {
    _ = try resolverMode(beacons: false)
    _ = try requestedMediums()
    _ = try strategy()
    guard (1...65535).contains(lanPort) else {
      throw ValidationError("--lan-port must be between 1 and 65535, got \(lanPort)")
    }
    guard LANMulticastConfiguration(group: lanGroup).hasMulticastGroup else {
      throw ValidationError(
        "--lan-group must be a multicast address (IPv4 224.0.0.0/4 or IPv6 ff00::/8), got \(lanGroup)"
      )
    }
    if let lanInterface, lanInterface.isEmpty {
      throw ValidationError("--lan-interface must name an interface (see `ip link`)")
    }
    if let bleAdapter {
      guard Self.isAdapterName(bleAdapter) else {
        throw ValidationError(
          "--ble-adapter must name a Bluetooth adapter such as hci0 (see `nearby ble status`), got \"\(bleAdapter)\""
        )
      }
      if let requested = try requestedMediums(), !requested.contains(.ble) {
        throw ValidationError("--ble-adapter is for the BLE medium: add ble to --mediums")
      }
    }
    guard Logger.Level(rawValue: logLevel) != nil else {
      throw ValidationError(
        "--log-level must be one of \(Logger.Level.allCases.map(\.rawValue).joined(separator: ", ")), got \(logLevel)"
      )
    }
  }

  /// The resolver mode (`--resolver`, else the default for the options given) and, in
  /// `server` mode, the server's URL text (`--server`, else `NEARBY_SERVER`).
  /// - Throws: `ValidationError` naming the fix.
  func resolverMode(beacons: Bool) throws -> (mode: ResolverMode, server: String?) {
    let chosen = try ResolverMode.chosen(
      explicit: peer.resolver, server: resolver.server,
      environment: ProcessInfo.processInfo.environment, beacons: beacons)
    if let server = chosen.server { try ResolverOptions.checkServerURL(server) }
    if chosen.mode != .peer, peer.lostAfter != nil {
      throw ValidationError(
        "--lost-after is for --resolver peer (a server has its own --lost-after)")
    }
    return chosen
  }

  /// `--mediums` as a set, or `nil` for "what this machine has".
  func requestedMediums() throws -> DiscoveryMediums? {
    guard let mediums else { return nil }
    var result: DiscoveryMediums = []
    for name in Self.list(mediums) {
      guard let medium = DiscoveryMediums(name: name), medium != .optical else {
        throw ValidationError(
          name == "optical"
            ? "--mediums: optical is read by a person or a camera, not by this machine: with "
              + "--web the box shows its code for phones to type"
            : "--mediums: unknown medium \"\(name)\"; known: ble, audio, lan")
      }
      result.insert(medium)
    }
    if result.isEmpty { throw ValidationError("--mediums needs at least one of ble, audio, lan") }
    return result
  }

  /// The strategy from `--mode` and `--ttl`, with every medium (narrowed later to the chosen).
  func strategy() throws -> Strategy {
    var strategy = Strategy()
    var mode: DiscoveryMode = []
    for name in Self.list(self.mode) {
      guard let option = DiscoveryMode(name: name) else {
        throw ValidationError("--mode: unknown mode \"\(name)\"; known: broadcast, scan")
      }
      mode.insert(option)
    }
    if mode.isEmpty { throw ValidationError("--mode needs broadcast, scan or both") }
    strategy.mode = mode
    if ttl == "infinite" {
      strategy.ttl = .infinite
    } else if let seconds = Double(ttl) {
      do { strategy.ttl = try TTL(seconds: seconds) } catch {
        throw ValidationError("--ttl: \(error)")
      }
    } else {
      throw ValidationError("--ttl takes seconds (up to 86400) or 'infinite', got \(ttl)")
    }
    return strategy
  }

  var mediumOptions: MediumOptions {
    let environment = ProcessInfo.processInfo.environment
    let fromEnvironment = environment[LANMulticastConfiguration.interfaceEnvironmentVariable]
    return MediumOptions(
      lanInterfaceName: lanInterface ?? (fromEnvironment?.isEmpty == false ? fromEnvironment : nil),
      lanPort: UInt16(clamping: lanPort), lanGroup: lanGroup, bleAdapter: bleAdapter)
  }

  /// Whether `name` is a BlueZ adapter name: `hci` and a number.
  static func isAdapterName(_ name: String) -> Bool {
    let number = name.dropFirst(3)
    return name.hasPrefix("hci") && (1...5).contains(number.count)
      && number.allSatisfy { $0.isASCII && $0.isNumber }
  }

  func logger(label: String) -> Logger {
    var logger = Logger(label: label)
    logger.logLevel = Logger.Level(rawValue: logLevel) ?? .warning
    return logger
  }

  private static func list(_ text: String) -> [String] {
    text.split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) }.filter {
      !$0.isEmpty
    }
  }
}
