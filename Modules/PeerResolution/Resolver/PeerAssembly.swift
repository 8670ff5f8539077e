@_spi(Resolver) public import Core
public import Logging

/// Peer mode, assembled: a resolver over the transports the carriers opened, and the mediums
/// to give the manager (see ``PeerResolver/assemble(_:otherMediums:configuration:logger:)``).
public struct PeerAssembly: Sendable {
  /// A carrier whose transport did not open.
  public struct Failure: Sendable {
    /// The carrier's name (`"lan"`, `"ble"`).
    public var carrier: String
    /// What the transport threw.
    public var error: any Error
  }

  /// The resolver, which owns the transports that opened: give it to the manager with
  /// `ResolverChoice.peer(_:name:)`, and shut it down after the manager.
  public let resolver: PeerResolver
  /// The carriers' mediums (set up for their transports, or without them when those failed),
  /// then the other mediums, in the order given.
  public let mediums: [MediumProvider]
  /// The transports that opened, in the carriers' order; the resolver owns them (read their
  /// counters, never shut them down yourself).
  public let transports: [any PeerTransport]
  /// What each transport that opened is, in the same order (for a start note).
  public let descriptions: [String]
  /// The carriers whose transports did not open.
  public let failures: [Failure]

  /// Whether the carrier named `name` opened its transport.
  public func opened(_ name: String) -> Bool {
    carriersOpened.contains(name)
  }

  let carriersOpened: Set<String>
}

/// No carrier could open its transport: peer resolution has no way to reach anyone.
public struct PeerAssemblyError: Error, Sendable, CustomStringConvertible {
  /// Every carrier's failure.
  public var failures: [PeerAssembly.Failure]

  public var description: String {
    guard !failures.isEmpty else { return "peer resolution needs at least one carrier" }
    return "no peer transport could open: "
      + failures.map { "\($0.carrier): \($0.error)" }.joined(separator: "; ")
  }
}

extension PeerResolver {
  /// Sets peer mode up in one call: opens each carrier's transport (in order), makes a
  /// resolver over those that opened, and returns it with the mediums to run.
  ///
  /// A carrier whose transport fails is listed in ``PeerAssembly/failures`` and its medium
  /// runs without it; what to make of that (go on, warn, give up) is the caller's.
  /// - Throws: ``PeerAssemblyError`` when no transport opened (the ones that did not are
  ///   named); `ResolutionConfigurationError` (Resolution) for a configuration out of range,
  ///   after closing the transports.
  public static func assemble(
    _ carriers: [PeerCarrier], otherMediums: [MediumProvider] = [],
    configuration: PeerResolverConfiguration = .init(),
    logger: Logger = Logger(label: "nearby.peer")
  ) async throws -> PeerAssembly {
    var opened: [(name: String, opened: PeerCarrier.Opened)] = []
    var failures: [PeerAssembly.Failure] = []
    var mediums: [MediumProvider] = []
    for carrier in carriers {
      do {
        let transport = try await carrier.open(logger)
        opened.append((carrier.name, transport))
        if let medium = transport.medium { mediums.append(medium) }
      } catch {
        // The caller decides what the failure means (it is in the assembly): info, not more.
        logger.info(
          "a peer transport did not open",
          metadata: ["carrier": "\(carrier.name)", "error": "\(error)"])
        failures.append(.init(carrier: carrier.name, error: error))
        if let medium = carrier.mediumWithoutTransport { mediums.append(medium) }
      }
    }
    guard !opened.isEmpty else { throw PeerAssemblyError(failures: failures) }
    let resolver: PeerResolver
    do {
      resolver = try PeerResolver(
        transports: opened.map(\.opened.transport), configuration: configuration, logger: logger)
    } catch {
      for (_, item) in opened { await item.transport.shutdown() }
      throw error
    }
    return PeerAssembly(
      resolver: resolver, mediums: mediums + otherMediums,
      transports: opened.map(\.opened.transport),
      descriptions: opened.map(\.opened.description), failures: failures,
      carriersOpened: Set(opened.map(\.name)))
  }
}
