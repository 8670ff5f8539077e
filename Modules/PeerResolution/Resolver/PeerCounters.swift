/// What the peer resolver did with the datagrams it received and sent, for tests and
/// diagnostics. Every datagram received is counted once as accepted or under one reason
/// for dropping it.
public struct PeerCounters: Sendable, Hashable {
  /// Datagrams received from the transports.
  public var received = 0
  /// Opened, not replayed, within the rate limit, decoded, and fresh where that applies.
  public var accepted = 0
  /// Larger than ``PeerLimits/maximumDatagramSize``.
  public var droppedOversized = 0
  /// Too short, wrong magic or version, or a body that does not decode (a count or size
  /// past a limit, an invalid value).
  public var droppedMalformed = 0
  /// Another project's tag, or received before any device registered (no key yet).
  public var droppedOtherProject = 0
  /// The seal did not open (forged or corrupted).
  public var droppedUnauthenticated = 0
  /// A who-has, query or unasked answer sent outside the clock window. A stale query gets
  /// nothing (it may be a capture relayed from a forged source); a stale who-has gets its
  /// `iHave`, of its own size (so a peer whose clock is off learns the offset), with no other
  /// effect.
  public var droppedStale = 0
  /// A nonce seen before.
  public var droppedReplayed = 0
  /// Over the sender's rate limit (its address and port).
  public var droppedRateLimited = 0
  /// Over the sender's host's rate limit (every port of one machine together).
  public var droppedHostRateLimited = 0
  /// Queries answered with a cookie (an `iHave`) instead of publications: their address had
  /// not yet proven it receives what is sent to it, or their cookie had expired.
  public var challenged = 0
  /// Who-has sent to every device (a token heard with no way back, or whose way back did
  /// not answer).
  public var whoHasSent = 0
  /// Probes sent to a sighting's way back (an address nothing had vouched for yet): a query
  /// with no handles and no cookie, which only an `iHave` answers.
  public var probes = 0
  /// Valid, but nobody asked for it or nothing here concerns it (an answer to no query,
  /// a query for a token not ours).
  public var ignored = 0
  /// Questions and answers from a new peer refused because
  /// ``PeerResolverConfiguration/maximumShadows`` peers were held.
  public var refusedPeers = 0
  /// Datagrams sent.
  public var sent = 0
  /// Datagrams that could not be sent (the transport refused them).
  public var sendFailures = 0
  /// Messages not sent because their address's byte budget was spent
  /// (``PeerResolverConfiguration/bytesPerDestination``).
  public var refusedSends = 0
  /// Datagrams dropped from a full outbox (the oldest waiting).
  public var outboxOverflows = 0
  /// Refreshes that needed no question: the owner's digest was unchanged and it hears this
  /// device itself.
  public var localRefreshes = 0
  /// Unasked updates sent to a hearer this device stopped hearing on a medium it had told
  /// it it heard it on (so that the hearer asks again, and this side stays fresh).
  public var hearingLapses = 0
  /// Answers sent without publications because the question named the owner's digest as
  /// held and it still was (``PeerAnswer/unchanged``).
  public var unchangedAnswers = 0
  /// Questions sent without this device's handles because the owner said it holds them.
  public var handlesLeftOut = 0
  /// Answers that said the owner does not hold the handles the question left out (it forgot
  /// this device): the question went again with them.
  public var handlesWanted = 0

  public init() {}

  /// Every datagram dropped, whatever the reason.
  public var dropped: Int {
    droppedOversized + droppedMalformed + droppedOtherProject + droppedUnauthenticated
      + droppedStale + droppedReplayed + droppedRateLimited + droppedHostRateLimited
  }
}
