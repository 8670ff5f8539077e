@_spi(Resolver) public import Core
public import Logging

extension ResolverChoice {
  /// Peer resolution: no server; devices in earshot resolve each other's tokens by asking
  /// the owner over `transports` (see ``PeerResolver``).
  ///
  /// One resolver is made now and serves every manager that uses this choice, all of one
  /// project (the API key of the first manager to register). It owns the transports and keeps
  /// them open while the choice (and any manager made with it) is held, managers coming and
  /// going: the last manager shutting down does not stop it, so a manager made later with
  /// the same choice works. They are closed when the resolver is released; call
  /// ``PeerResolver/shutdown()`` on one made with ``peer(_:name:)`` to close them at once.
  /// The resolver is an actor; its loop runs on the cooperative pool.
  /// - Parameters:
  ///   - transports: how to reach other devices (the LAN plugin's, or MediumTestKit's
  ///     in-memory one in tests).
  ///   - configuration: the engine's rules (`lostAfter`, …) and the exchange's timing.
  ///   - logger: where the resolver logs.
  /// - Throws: `ResolutionConfigurationError` (Resolution) for a configuration out of range.
  public static func peer(
    transports: [any PeerTransport], configuration: PeerResolverConfiguration = .init(),
    logger: Logger = Logger(label: "nearby.peer")
  ) throws -> ResolverChoice {
    .peer(try PeerResolver(transports: transports, configuration: configuration, logger: logger))
  }

  /// A peer resolver you made yourself (tests make one with their own time).
  public static func peer(_ resolver: PeerResolver, name: String = "peer") -> ResolverChoice {
    ResolverChoice(name: name) { resolver }
  }
}
