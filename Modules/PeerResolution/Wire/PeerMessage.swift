@_spi(Resolver) public import Core
public import Strategy
public import Tokens

/// What a peer datagram says, once opened.
///
/// - ``whoHas(queryID:token:)``: sent to every device (multicast) for a token heard on a
///   medium that gives no way back (audio); only the token's owner answers, with
///   ``iHave(queryID:token:cookie:)`` by unicast. The `iHave` is no larger than the who-has
///   (both take the smallest padded size), so a who-has relayed from a forged source gains
///   nothing.
/// - ``query(_:)``: the hearer asks the owner directly (where an `iHave` or an answer came
///   from), telling it which mediums it heard the token on and its own handles (or only
///   their digest, when the owner said it holds them), with the cookie the owner gave that
///   address, and the digest of the owner's answer it holds (an owner whose handles still
///   have that digest answers without its publications). A query without a valid cookie is answered with an
///   `iHave` carrying one, never with the answer: the owner sends its publications only to an
///   address that proved it receives what is sent to it (RFC 9000 §8's rule).
/// - ``answer(_:)``: the owner's publications that may reach the hearer, with their remaining
///   TTL, the digest of its handles, and the mediums it hears the hearer on itself. Sent for
///   a query (same query id) and, unasked (query id 0), to recent hearers when the owner's
///   publications change or it stops hearing one it said it heard.
///
/// No field is stable across token rotations: query ids are random, and each side names
/// itself by an ephemeral id drawn anew for each token it transmits.
public enum PeerMessage: Sendable, Hashable {
  case whoHas(queryID: UInt64, token: Token)
  case iHave(queryID: UInt64, token: Token, cookie: UInt64)
  case query(PeerQuery)
  case answer(PeerAnswer)

  /// The kind written in the header.
  public var kind: PeerMessageKind {
    switch self {
    case .whoHas: .whoHas
    case .iHave: .iHave
    case .query: .query
    case .answer: .answer
    }
  }
}

/// The kinds of ``PeerMessage``, as the header's kind byte.
public enum PeerMessageKind: UInt8, Sendable, Hashable {
  case whoHas = 1
  case iHave = 2
  case query = 3
  case answer = 4
}

/// A hearer's question to a token's owner.
public struct PeerQuery: Sendable, Hashable {
  /// Random, matches the answer to the question.
  public var queryID: UInt64
  /// The cookie the owner gave the hearer's address (in an `iHave`), or 0 for none.
  public var cookie: UInt64
  /// The owner's token, as heard.
  public var token: Token
  /// The mediums the hearer heard it on since it last asked.
  public var mediums: DiscoveryMediums
  /// The hearer's ephemeral id (new with each of its tokens).
  public var sender: Identifier
  /// The digest of the owner's answer the hearer holds (``PeerAnswer/digest``), or nil: an
  /// owner whose handles under `token` still have this digest answers ``PeerAnswer/unchanged``.
  public var knownDigest: HandlesDigest?
  /// The digest of the hearer's handles (``PeerKeys/digest(of:owner:hearer:at:)``), or nil
  /// for none (a probe).
  public var handlesDigest: HandlesDigest?
  /// The hearer's publications and subscriptions, so the owner can find them too; nil when
  /// the owner said it holds those of `handlesDigest` (``PeerAnswer/yours``).
  public var handles: PeerHandles?

  public init(
    queryID: UInt64, cookie: UInt64 = 0, token: Token, mediums: DiscoveryMediums,
    sender: Identifier, knownDigest: HandlesDigest? = nil, handlesDigest: HandlesDigest? = nil,
    handles: PeerHandles?
  ) {
    self.queryID = queryID
    self.cookie = cookie
    self.token = token
    self.mediums = mediums
    self.sender = sender
    self.knownDigest = knownDigest
    self.handlesDigest = handlesDigest
    self.handles = handles
  }
}

/// An owner's answer: its publications that may reach the hearer.
public struct PeerAnswer: Sendable, Hashable {
  /// The query answered, or 0 for an update nobody asked for.
  public var queryID: UInt64
  /// The owner's token the answer is about.
  public var token: Token
  /// The owner's ephemeral id.
  public var sender: Identifier
  /// A fresh cookie for the hearer's address (see ``PeerQuery/cookie``), or 0.
  public var cookie: UInt64
  /// How long the token still resolves at the owner, in milliseconds.
  public var tokenValidFor: UInt32
  /// The full current set (a publication missing from a later answer was unpublished);
  /// empty when ``unchanged`` or ``handlesWanted``.
  public var publications: [PeerPublication]
  /// The digest of the owner's handles under `token` (what its announcements carry beside
  /// the token), or nil: a hearer that keeps hearing this digest needs no new answer.
  public var digest: HandlesDigest?
  /// The mediums on which the owner itself hears the hearer lately: on those, the owner
  /// needs no question to know the hearer is near (its own hearing keeps that fresh).
  public var hearsYou: DiscoveryMediums
  /// The digest of the hearer's handles the owner holds (``PeerQuery/handlesDigest`` of the
  /// query that last carried them), or nil: while the hearer's handles keep that digest, its
  /// questions may leave them out.
  public var yours: HandlesDigest?
  /// The query's ``PeerQuery/knownDigest`` is still the owner's: the publications of the
  /// answer that carried it stand, none are sent again (a refresh of an unchanged 100 KiB
  /// publication carries none of it).
  public var unchanged: Bool
  /// The query left its handles out, and the owner does not hold those of its digest (it
  /// forgot the hearer): ask again with them. Nothing else in the answer counts.
  public var handlesWanted: Bool

  public init(
    queryID: UInt64, token: Token, sender: Identifier, cookie: UInt64 = 0,
    tokenValidFor: UInt32, publications: [PeerPublication], digest: HandlesDigest? = nil,
    hearsYou: DiscoveryMediums = [], yours: HandlesDigest? = nil, unchanged: Bool = false,
    handlesWanted: Bool = false
  ) {
    self.queryID = queryID
    self.token = token
    self.sender = sender
    self.cookie = cookie
    self.tokenValidFor = tokenValidFor
    self.publications = publications
    self.digest = digest
    self.hearsYou = hearsYou
    self.yours = yours
    self.unchanged = unchanged
    self.handlesWanted = handlesWanted
  }
}

/// A device's handles as the peer exchange carries them: no ids (they would outlive a token).
public struct PeerHandles: Sendable, Hashable {
  public var publications: [PeerPublication]
  public var subscriptions: [PeerSubscription]

  public init(publications: [PeerPublication] = [], subscriptions: [PeerSubscription] = []) {
    self.publications = publications
    self.subscriptions = subscriptions
  }
}

/// A publication on the wire: its message, its strategy, and its remaining TTL in the
/// strategy's `ttl`.
public struct PeerPublication: Sendable, Hashable {
  public var message: Message
  public var strategy: Strategy

  public init(message: Message, strategy: Strategy) {
    self.message = message
    self.strategy = strategy
  }

  /// What stays the same from one answer to the next (the remaining TTL does not).
  var identity: PeerPublication {
    var copy = self
    copy.strategy.ttl = .infinite
    return copy
  }
}

/// A subscription on the wire, with its remaining TTL in the strategy's `ttl`.
public struct PeerSubscription: Sendable, Hashable {
  public var namespace: String
  public var type: String?
  public var strategy: Strategy
  public var deviceTypes: DeviceTypes

  public init(namespace: String, type: String?, strategy: Strategy, deviceTypes: DeviceTypes) {
    self.namespace = namespace
    self.type = type
    self.strategy = strategy
    self.deviceTypes = deviceTypes
  }

  /// What stays the same from one query to the next.
  var identity: PeerSubscription {
    var copy = self
    copy.strategy.ttl = .infinite
    return copy
  }

  /// Whether the subscription's filters let `message` through.
  func accepts(_ message: Message) -> Bool {
    message.namespace == namespace && (type == nil || type == message.type)
  }
}
