@_spi(Resolver) import Core
import Foundation
import Strategy
import Tokens

/// A peer device as the local engine knows it: registered in the engine like any device, with
/// the publications and subscriptions the peer last told us, and the peer's tokens bound to
/// it. Named by the peer's ephemeral id, so it lasts one of the peer's token rotations.
struct ShadowDevice: Sendable {
  let credentials: DeviceCredentials
  /// The peer's publications (without their remaining TTL) and their ids in the engine.
  var publications: [PeerPublication: PublicationID] = [:]
  /// The peer's subscriptions (without their remaining TTL) and their ids in the engine.
  var subscriptions: [PeerSubscription: SubscriptionID] = [:]
  /// The subscriptions as last received (with TTL), to filter what we answer it.
  var lastSubscriptions: [PeerSubscription] = []
  /// The digest the peer gave its handles in the question that last carried them (and the
  /// engine took): its questions may leave out handles of this digest.
  var handlesDigest: HandlesDigest?
  /// The local device whose answer (or update) from the peer last set ``publications``, with
  /// that answer's digest: only that device's questions may name the digest as held (answers
  /// are filtered by the asker's subscriptions, and the peer's own questions set the whole
  /// set), so an "unchanged" answer always stands for what the shadow holds. Nil once
  /// anything else set them, or the engine refused them.
  var answeredFor: AnsweredPublications?
  /// The peer's tokens bound to it in the engine's store.
  var tokens: Set<Token> = []
  /// Until when each token resolves at the peer, as its newest answer said: a local refresh
  /// binds the token again up to then, as an answer would.
  var validUntil: [Token: Date] = [:]
  /// When the peer last asked or answered.
  var lastContact: Date
  /// The send time (the peer's stamp, ms) of the newest answer taken from it: an unasked
  /// answer sent before it is older news and is ignored.
  var newestAnswer: UInt64 = 0
}

/// A device that asked one of our local devices about its token: where to send unasked
/// updates, and until when.
struct RecentHearer: Sendable {
  var address: PeerAddress
  var token: Token
  var until: Date
  /// The mediums our last answer said we hear it on: while we do, it asks us no more, and it
  /// is kept (past `until`) so that it learns when we stop.
  var toldHears: DiscoveryMediums = []
  /// When we last told it we stopped hearing it on one of those (an unasked answer): told
  /// again every refresh interval until it asks (a datagram may be lost), and forgotten with
  /// the rest once `until` passes.
  var lapseToldAt: Date?
}

/// Which answer set a shadow's publications: for which local device, under which digest.
struct AnsweredPublications: Sendable, Hashable {
  var local: DeviceID
  var digest: HandlesDigest
}
