public import Core
import Foundation
import Logging

extension MediumProvider {
  /// The LAN multicast medium. When `configuration.interface` is `nil`, the interface named by
  /// `NEARBY_LAN_INTERFACE` is used if set, else the kernel's choice.
  ///
  /// ```swift
  /// let manager = try await MessageManager(apiKey: key, configuration: .init(
  ///     resolver: .server(url), mediums: [.lan(.init(interface: "eth0"))]))
  /// ```
  /// Strategies opt in to LAN (`Strategy(mediums: [.ble, .lan])`): it is not in
  /// `DiscoveryMediums.default`. Datagrams are authenticated only when
  /// `configuration.sharedKey` is set (the same key on every device of the site).
  /// - Throws (when the manager makes the medium): ``LANMulticastError``.
  /// - Parameters:
  ///   - configuration: the group, port, interface, timing and shared key (the defaults work
  ///     with nothing set up).
  ///   - environment: where to read `NEARBY_LAN_INTERFACE`; `nil` (the default): this
  ///     process's environment.
  public static func lan(
    _ configuration: LANMulticastConfiguration = LANMulticastConfiguration(),
    environment: [String: String]? = nil
  ) -> MediumProvider {
    let environment = environment ?? ProcessInfo.processInfo.environment
    var configuration = configuration
    if configuration.interface == nil,
      let name = environment[LANMulticastConfiguration.interfaceEnvironmentVariable],
      !name.isEmpty
    {
      configuration.interface = name
    }
    let resolved = configuration
    return MediumProvider(name: "lan \(resolved.interface ?? "default")") { context in
      let medium = try LANMulticastMedium(configuration: resolved)
      context.logger.debug(
        "LAN medium started",
        metadata: [
          "group": "\(resolved.group)", "port": "\(resolved.port)",
          "interface": "\(resolved.interface ?? "default")",
          "authenticated": "\(resolved.sharedKey != nil)",
        ])
      return medium
    }
  }
}
