@_spi(Resolver) public import Resolution

/// How a ``PeerResolver`` resolves and how it exchanges with peers.
public struct PeerResolverConfiguration: Sendable, Hashable {
  /// The engine's rules (`lostAfter`, token lifetime, …), as for the in-process resolver.
  public var resolution: ResolutionConfiguration
  /// When to ask owners, retry, refresh and forget (see ``PeerExchangeStateMachine``).
  /// Its ``PeerExchangeStateMachine/Configuration/refreshInterval`` should stay well under
  /// `resolution.lostAfter`: each refresh keeps the owner's nearness fresh.
  public var exchange: PeerExchangeStateMachine.Configuration
  /// A peer device (shadow) nothing was heard from for this long is removed from the local
  /// engine. Default 60 s.
  public var shadowExpiry: Duration
  /// The most peer devices (shadows) the engine holds; a question or answer from a new peer
  /// past it is refused and counted (``PeerCounters/refusedPeers``). Default 1024.
  public var maximumShadows: Int
  /// How long an owner keeps sending unasked updates (a publication added or removed) to a
  /// device that asked it, from its last question; a device it told it hears is kept for as
  /// long as it still hears it, and this long after. Default 15 s.
  public var hearerMemory: Duration
  /// How often the resolver's clock ticks: retries, refreshes, deadlines. Default 250 ms.
  public var tickInterval: Duration
  /// Datagrams accepted per sender (address and port) and second, sustained. Default 20.
  public var ratePerSender: Double
  /// Datagrams a sender may send at once. Default 40.
  public var burstPerSender: Double
  /// Datagrams accepted per host (every port of one machine together, see
  /// `PeerTransport.host(of:)`) and second, sustained: one machine sending from many ports
  /// gets no more than this. Default 400 (a host may run many devices).
  public var ratePerHost: Double
  /// Datagrams a host may send at once. Default 800.
  public var burstPerHost: Double
  /// Who-has accepted per sender and second, sustained: a budget of their own, so who-has
  /// (multicast, answered by unicast) cannot spend a sender's budget for questions and
  /// answers. Default 10.
  public var whoHasRatePerSender: Double
  /// Who-has a sender may send at once. Default 20.
  public var whoHasBurstPerSender: Double
  /// Bytes sent to one host (every port of it) per second, sustained: defence in depth
  /// beside the rule that only an address that proved it receives gets more than a
  /// who-has-sized datagram. Default 256 KiB.
  public var bytesPerDestination: Double
  /// Bytes that may go to one host at once (at least a full message in fragments).
  /// Default 1 MiB.
  public var burstBytesPerDestination: Double
  /// The most datagrams waiting to be sent; beyond it the oldest are dropped. Default 1024.
  public var outboxCapacity: Int

  public init(
    resolution: ResolutionConfiguration = .init(),
    exchange: PeerExchangeStateMachine.Configuration = .init(),
    shadowExpiry: Duration = .seconds(60), maximumShadows: Int = 1024,
    hearerMemory: Duration = .seconds(15),
    tickInterval: Duration = .milliseconds(250), ratePerSender: Double = 20,
    burstPerSender: Double = 40, ratePerHost: Double = 400, burstPerHost: Double = 800,
    whoHasRatePerSender: Double = 10,
    whoHasBurstPerSender: Double = 20, bytesPerDestination: Double = 256 * 1024,
    burstBytesPerDestination: Double = 1024 * 1024, outboxCapacity: Int = 1024
  ) {
    self.resolution = resolution
    self.exchange = exchange
    self.shadowExpiry = shadowExpiry
    self.maximumShadows = maximumShadows
    self.hearerMemory = hearerMemory
    self.tickInterval = tickInterval
    self.ratePerSender = ratePerSender
    self.burstPerSender = burstPerSender
    self.ratePerHost = ratePerHost
    self.burstPerHost = burstPerHost
    self.whoHasRatePerSender = whoHasRatePerSender
    self.whoHasBurstPerSender = whoHasBurstPerSender
    self.bytesPerDestination = bytesPerDestination
    self.burstBytesPerDestination = burstBytesPerDestination
    self.outboxCapacity = outboxCapacity
  }

  /// Checks the engine's ranges and the exchange's: positive durations and counts, and a
  /// refresh interval under `lostAfter` (else the owner's side loses a hearer that is still
  /// hearing it, between two refreshes).
  /// - Throws: `ResolutionConfigurationError` (Resolution) naming the field.
  public func validate() throws(ResolutionConfigurationError) {
    try resolution.validate()
    let durations: [(String, Duration)] = [
      ("shadowExpiry", shadowExpiry), ("hearerMemory", hearerMemory),
      ("tickInterval", tickInterval), ("exchange.queryTimeout", exchange.queryTimeout),
      ("exchange.refreshInterval", exchange.refreshInterval),
      ("exchange.forgetAfter", exchange.forgetAfter),
      ("exchange.maximumRest", exchange.maximumRest),
      ("exchange.whoHasSendersWindow", exchange.whoHasSendersWindow),
    ]
    for (field, value) in durations where value <= .zero {
      throw .outOfRange(field: field, value: value, range: "more than 0 s")
    }
    if let allowance = exchange.connectionAllowance,
      allowance < .zero || allowance > resolution.lostAfter
    {
      throw .outOfRange(
        field: "exchange.connectionAllowance", value: allowance,
        range: "0 s to lostAfter (\(resolution.lostAfter))")
    }
    guard exchange.refreshInterval < resolution.lostAfter else {
      throw .outOfRange(
        field: "exchange.refreshInterval", value: exchange.refreshInterval,
        range: "less than lostAfter (\(resolution.lostAfter))")
    }
    let counts: [(String, Int)] = [
      ("exchange.maximumAttempts", exchange.maximumAttempts),
      ("exchange.maximumTracked", exchange.maximumTracked),
      ("exchange.maximumOutstanding", exchange.maximumOutstanding),
      ("outboxCapacity", outboxCapacity), ("maximumShadows", maximumShadows),
      ("ratePerSender", ratePerSender > 0 ? 1 : 0), ("burstPerSender", burstPerSender >= 1 ? 1 : 0),
      ("ratePerHost", ratePerHost > 0 ? 1 : 0), ("burstPerHost", burstPerHost >= 1 ? 1 : 0),
      ("whoHasRatePerSender", whoHasRatePerSender > 0 ? 1 : 0),
      ("whoHasBurstPerSender", whoHasBurstPerSender >= 1 ? 1 : 0),
      ("bytesPerDestination", bytesPerDestination > 0 ? 1 : 0),
      (
        "burstBytesPerDestination",
        burstBytesPerDestination >= Double(PeerLimits.maximumDatagramSize) ? 1 : 0
      ),
      ("exchange.maximumOutstandingWhoHas", exchange.maximumOutstandingWhoHas),
      ("exchange.whoHasPerSecond", exchange.whoHasPerSecond > 0 ? 1 : 0),
      ("exchange.whoHasBurst", exchange.whoHasBurst >= 1 ? 1 : 0),
      ("exchange.segmentWhoHasPerSecond", exchange.segmentWhoHasPerSecond > 0 ? 1 : 0),
      // Zero would leave a device one who-has, then none.
      ("exchange.minimumWhoHasPerSecond", exchange.minimumWhoHasPerSecond > 0 ? 1 : 0),
    ]
    for (field, value) in counts where value < 1 {
      throw .countOutOfRange(field: field, value: value, range: "at least 1")
    }
  }
}
