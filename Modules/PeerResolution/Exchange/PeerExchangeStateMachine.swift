@_spi(Resolver) public import Core
public import Foundation
public import Strategy
public import Tokens

/// The hearer's side of the peer exchange as a value: which tokens to ask about, when, where,
/// and when to give up or forget. Events and the current instant go in, actions come out;
/// nothing here sends, sleeps or reads a clock, so every rule is tested on plain instants.
///
/// Per (local device, heard token):
/// - heard for the first time: find its owner. A sighting's way back (a `PeerAddress`) is
///   unauthenticated where the medium's frames are (anyone could have named a victim's
///   address), so it gets a *probe*, a query with nothing in it that only an `iHave` with a
///   cookie answers, no larger than the probe; only an address that answered one of our questions (an `iHave` or an
///   answer echoing a random id we sent it) gets a query, which carries the device's handles.
///   A transport whose addresses cannot be forged (``Configuration/verifiedTransports``, a
///   connection) is queried at once. With no way back, a who-has to every device (when a
///   transport can);
/// - a probe unanswered within ``Configuration/queryTimeout``: that address is not tried
///   again for the token, and the owner is asked with a who-has to every device at once;
/// - an owner's `iHave`: ask it directly (and once more, at once, when the `iHave` answers a
///   query: the owner refused the query's cookie and sent a new one);
/// - no answer within ``Configuration/queryTimeout`` (the first attempt of a round to a way
///   back over a connection, with no owner's address confirmed, also
///   ``Configuration/connectionAllowance``): ask again, the wait doubling each time,
///   up to ``Configuration/maximumAttempts``; then rest for ``Configuration/restAfterFailure``
///   (and forget the address, so the next attempt may ask everyone). A token never answered
///   rests twice as long after each failed round, up to ``Configuration/maximumRest`` (a
///   device of another project, or an emitter of random tokens, is asked ever more rarely);
/// - answered: ask again (a refresh) once ``Configuration/refreshInterval`` has passed, but
///   only while the token keeps being heard, or at once when the local device's handles
///   change. A refresh is *local*, with nothing sent, when a digest heard since the last
///   refresh equals the one of the owner's answer (its handles are unchanged) and the owner
///   said it hears this device itself on every medium this device heard it on since that
///   answer (its side stays fresh without our questions); ``Action/refreshedLocally(_:owner:)``
///   says so. A digest heard that differs from the answer's asks at once (at most once per
///   ``Configuration/queryTimeout``): the owner's handles changed. An owner's unasked update
///   that no longer covers those mediums makes the next refresh a question. What a
///   question may leave out is kept here too: the digest of the owner's newest answer
///   (``answeredDigest(of:)``) and of this device's handles the owner holds
///   (``ownerHolds(_:)``); an owner that no longer holds them makes the question go again at
///   once, once (``handlesWanted(queryID:from:now:)``);
/// - not heard for ``Configuration/forgetAfter``: forgotten.
///
/// Where questions go: the address an owner answered from is kept for as long as questions
/// to it are answered. A sighting's way back is used only for a token with no such address,
/// or once questions to it went unanswered, and never once a probe there failed; so a forged
/// announcement can neither redirect an answered owner's refreshes nor keep a newcomer from
/// finding the owner.
///
/// Bounded: at most ``Configuration/maximumTracked`` tokens are followed (a new token past
/// that takes the place of the token heard longest ago that was never answered, or is
/// ignored and counted when every token followed was answered); at most
/// ``Configuration/maximumOutstanding`` questions wait for an answer at once, of which at
/// most ``Configuration/maximumOutstandingWhoHas`` who-has; and who-has go out at most at
/// ``Configuration/whoHasPerSecond`` (burst ``Configuration/whoHasBurst``), less when other
/// devices are heard sending who-has (``Configuration/segmentWhoHasPerSecond``). A question
/// past a bound waits its turn, keeping its attempt count.
public struct PeerExchangeStateMachine: Sendable {
  /// The timing and bounds of the exchange.
  public struct Configuration: Sendable, Hashable {
    /// How long to wait for an answer (or an `iHave`) before asking again. Default 1 s.
    public var queryTimeout: Duration = .seconds(1)
    /// How many times to ask before resting. Default 3.
    public var maximumAttempts = 3
    /// How long to rest after a question went unanswered `maximumAttempts` times: for a
    /// token never answered, the first rest; each further failed round doubles it.
    /// Default 5 s.
    public var restAfterFailure: Duration = .seconds(5)
    /// The longest rest of a token never answered. Default 300 s.
    public var maximumRest: Duration = .seconds(300)
    /// How often to ask an owner again while its token is heard: well under `lostAfter`, so
    /// the owner's nearness stays fresh. Default 3 s (a third of the default `lostAfter`).
    public var refreshInterval: Duration = .seconds(3)
    /// A token not heard for this long is forgotten. Default 40 s.
    public var forgetAfter: Duration = .seconds(40)
    /// The most tokens followed at once. Default 256.
    public var maximumTracked = 256
    /// The most questions waiting for an answer at once. Default 32.
    public var maximumOutstanding = 32
    /// The most who-has among them, so direct questions (refreshes, tokens heard with a way
    /// back) always have room. Default 16.
    public var maximumOutstandingWhoHas = 16
    /// Who-has sent per second, sustained, by all local devices together. Default 4.
    public var whoHasPerSecond: Double = 4
    /// Who-has that may go out at once. Default 8.
    public var whoHasBurst: Double = 8
    /// Who-has per second the whole segment may carry, every device together: a device that
    /// heard others send who-has within ``whoHasSendersWindow`` takes its share, this over
    /// their number and itself (its burst shrinks alike), between
    /// ``minimumWhoHasPerSecond`` and ``whoHasPerSecond``. A who-has goes to every device,
    /// so without a share N devices asking at once cost N × 4 multicasts a second, each
    /// received N times: past a hundred devices on one segment, more than their CPUs and
    /// the air take, and the questions then time out and fall back to more who-has.
    /// Default 16.
    public var segmentWhoHasPerSecond: Double = 16
    /// The least a device's who-has rate falls to, however many are heard sending them (a
    /// key holder sending from many addresses cannot silence the others). Default 0.2.
    public var minimumWhoHasPerSecond: Double = 0.2
    /// How long a device heard sending a who-has counts as sharing the segment. Default 10 s.
    public var whoHasSendersWindow: Duration = .seconds(10)
    /// Whether a who-has can be sent (a transport can reach every device).
    public var canAskEveryone = true
    /// The transports (`PeerAddress.transport` (Core)) whose addresses cannot be forged (a
    /// connection): a sighting's way back on one of them is queried without a probe.
    public var verifiedTransports: Set<String> = []
    /// Added to the first attempt's wait for an answer in a round of questions to an address
    /// of one of ``verifiedTransports`` while the token has no confirmed owner's address (a
    /// way back, before any answer or after a failed round): the transport opens a connection
    /// before the question goes (a GATT link takes one to three seconds in the BlueZ VM under
    /// load), and a question asked again meanwhile is answered twice, a 100 KiB answer read
    /// twice. A question to a confirmed address gets none, even when its link has closed since.
    /// Nil: none here; ``PeerResolver`` makes it 2 s when one of its transports makes
    /// connections.
    public var connectionAllowance: Duration?
    /// The most addresses remembered per token as failed probes. Default 4.
    public var maximumFailedAddresses = 4

    public init() {}
  }

  /// What a tracked token is named by: the local device that heard it and the token.
  public struct Key: Sendable, Hashable {
    public var local: DeviceID
    public var token: Token
    public init(local: DeviceID, token: Token) {
      self.local = local
      self.token = token
    }
  }

  /// What the owner of the state machine is to do.
  public enum Action: Sendable, Hashable {
    /// Send a who-has for `token` to every device.
    case sendWhoHas(queryID: UInt64, key: Key)
    /// Send a probe for `key.token` to `address` (a query with no handles and no cookie,
    /// answered by an `iHave`): a way back no answer has vouched for yet.
    case probe(queryID: UInt64, key: Key, to: PeerAddress)
    /// Send a query about `key.token` on behalf of `key.local` to `address`, saying it was
    /// heard on `mediums`.
    case sendQuery(queryID: UInt64, key: Key, mediums: DiscoveryMediums, to: PeerAddress)
    /// The token is no longer heard: nothing more will be asked about it.
    case forget(Key, owner: Identifier?)
    /// A refresh fell due and needed no question (see the type's notes): the owner's
    /// answer still holds, as if it had just been given again.
    case refreshedLocally(Key, owner: Identifier)
  }

  /// An answer that matched a question.
  public struct Resolution: Sendable, Hashable {
    public var key: Key
    /// When the token was last heard on each medium (for the sightings to record).
    public var heard: [DiscoveryMediums: Date]
  }

  private enum Phase: Sendable, Hashable {
    /// Nothing asked; not before `restUntil`.
    case idle(restUntil: Date?)
    /// A who-has is out (to every device, or to `probed` alone).
    case findingOwner(queryID: UInt64, attempt: Int, deadline: Date, probed: PeerAddress?)
    /// A query is out; `resent` once an `iHave` made it go again with a new cookie.
    case asking(
      queryID: UInt64, attempt: Int, deadline: Date, mediums: DiscoveryMediums, resent: Bool)
  }

  /// An earlier question's id: whose it is, and, for a who-has or a probe, until when its
  /// `iHave` still counts (see ``ownerFound(queryID:at:now:)``).
  private struct Earlier: Sendable {
    var key: Key
    var lateOwnerUntil: Date?
  }

  private struct Entry: Sendable {
    var phase: Phase = .idle(restUntil: nil)
    /// The latest way back a sighting or an `iHave` gave (unauthenticated).
    var address: PeerAddress?
    /// Where the owner answered from; kept until questions to it go unanswered.
    var confirmed: PeerAddress?
    /// Ways back whose probe went unanswered: never probed again for this token.
    var failedAddresses: [PeerAddress] = []
    var owner: Identifier?
    /// The attempt the next question is (a question deferred by a bound keeps its count).
    var nextAttempt = 1
    /// Rounds of `maximumAttempts` unanswered questions since the last answer.
    var failedRounds = 0
    var lastHeard: Date
    var heard: [DiscoveryMediums: Date] = [:]
    var lastAnswer: Date?
    /// When the last question went out (a refresh needs a sighting after it).
    var lastAsked: Date?
    /// When the first attempt of the current round of questions went out: parts of a
    /// datagram (``partArrived(from:now:)``) hold the round no longer than
    /// ``PeerLimits/reassemblyTimeout`` after it.
    var roundAsked: Date?
    /// Mediums heard since the last answer.
    var mediumsSinceAnswer: DiscoveryMediums = []
    /// Ids of earlier attempts still valid (see ``superseded``), oldest first.
    var earlierQueries: [UInt64] = []
    /// The owner's digest heard since the last refresh (a local refresh uses it up).
    var heardDigest: HandlesDigest?
    /// When the last local refresh was (a refresh of either kind needs a sighting after it).
    var lastLocalRefresh: Date?
    /// The digest the owner's newest answer (or update) carried.
    var answeredDigest: HandlesDigest?
    /// The mediums the owner said it hears this device on itself, in its newest answer.
    var ownerHears: DiscoveryMediums = []
    /// The digest of this device's handles the owner said it holds, in its newest answer.
    var ownerHolds: HandlesDigest?
    /// The question sent again with its handles (``handlesWanted(queryID:from:now:)``): once
    /// per question, apart from a cookie's resend.
    var handlesResentFor: UInt64?
  }

  public let configuration: Configuration
  private var entries: [Key: Entry] = [:]
  private var outstanding: [UInt64: Key] = [:]
  /// Questions asked again or given up: their ids stay valid (a late answer to an earlier
  /// attempt answers the question, even after the round was given up) until the token is
  /// answered or forgotten, the last ``maximumEarlierQueries`` of each token. Not counted as
  /// outstanding.
  private var superseded: [UInt64: Earlier] = [:]
  /// How many earlier question ids a token keeps valid.
  static let maximumEarlierQueries = 8
  /// Seeded query ids, for tests only; nil: the system's generator, so a query id tells a
  /// listener nothing of the ones before it.
  private var seeded: SplitMix64?
  private var whoHasBudget: Double
  private var whoHasBudgetAt: Date?
  /// The devices heard sending who-has, by address, and when last (at most
  /// ``maximumWhoHasSenders``).
  private var whoHasSenders: [PeerAddress: Date] = [:]
  /// The most who-has senders remembered; past that the share stays at its smallest.
  static let maximumWhoHasSenders = 512
  /// New tokens ignored because ``Configuration/maximumTracked`` were followed, all answered.
  public private(set) var refusedTokens = 0
  /// Tokens never answered let go to make room for a new one.
  public private(set) var evictedTokens = 0
  /// Questions put off by a bound (outstanding questions or the who-has rate), each time.
  public private(set) var deferredQuestions = 0

  /// - Parameters:
  ///   - configuration: the timeouts, retries, refresh and bounds of the exchange.
  ///   - seed: the seed of the query ids, for tests; nil (the default): each id is drawn from
  ///     the system's generator.
  public init(configuration: Configuration = .init(), seed: UInt64? = nil) {
    self.configuration = configuration
    seeded = seed.map { SplitMix64(seed: $0) }
    whoHasBudget = configuration.whoHasBurst
  }

  /// How many tokens are followed.
  public var trackedCount: Int { entries.count }
  /// How many questions wait for an answer.
  public var outstandingCount: Int { outstanding.count }
  /// The key a question is about, while it waits for its answer.
  public func key(ofQuery queryID: UInt64) -> Key? {
    outstanding[queryID] ?? superseded[queryID]?.key
  }
  /// The owner's ephemeral id learnt from the last answer for `key`.
  public func owner(of key: Key) -> Identifier? { entries[key]?.owner }
  /// The address the owner of `key` answered from, kept while questions to it are answered.
  public func confirmedAddress(of key: Key) -> PeerAddress? { entries[key]?.confirmed }
  /// The digest the owner's newest answer (or update) for `key` carried: what a question
  /// names as held (``PeerQuery/knownDigest``).
  public func answeredDigest(of key: Key) -> HandlesDigest? { entries[key]?.answeredDigest }
  /// The digest of `key.local`'s handles the owner said it holds in its newest answer (or
  /// update): while the handles keep it, a question may leave them out.
  public func ownerHolds(_ key: Key) -> HandlesDigest? { entries[key]?.ownerHolds }
  /// The mediums `key.token` was heard on by `key.local` at `since` or later.
  public func heardMediums(_ key: Key, since: Date) -> DiscoveryMediums {
    (entries[key]?.heard ?? [:]).reduce(into: []) { mediums, heard in
      if heard.value >= since { mediums.insert(heard.key) }
    }
  }

  // MARK: Events

  /// `key.local` heard `key.token` on `medium` at `now`; `returnPath` is how to reach its
  /// sender, and `digest` the digest of its handles heard beside the token, when the medium
  /// carries them.
  public mutating func heard(
    _ key: Key, on medium: DiscoveryMediums, returnPath: PeerAddress?,
    digest: HandlesDigest? = nil, at now: Date
  ) -> [Action] {
    var actions: [Action] = []
    if entries[key] == nil {
      if entries.count >= configuration.maximumTracked {
        guard let victim = leastRecentlyHeardUnanswered() else {
          refusedTokens += 1
          return []
        }
        drop(victim)
        evictedTokens += 1
        actions.append(.forget(victim, owner: nil))
      }
      entries[key] = Entry(lastHeard: now)
    }
    entries[key]!.lastHeard = now
    entries[key]!.heard[medium] = now
    entries[key]!.mediumsSinceAnswer.insert(medium)
    if let digest { entries[key]!.heardDigest = digest }
    // Used only while no answered address is kept, and never once its probe failed (see the
    // type's notes).
    if let returnPath, !entries[key]!.failedAddresses.contains(returnPath) {
      entries[key]!.address = returnPath
    }
    return actions + askIfDue(key, now: now)
  }

  /// The token heard longest ago that was never answered, if any.
  private func leastRecentlyHeardUnanswered() -> Key? {
    entries.filter { $0.value.owner == nil }
      .min {
        ($0.value.lastHeard, $0.key.token) < ($1.value.lastHeard, $1.key.token)
      }?.key
  }

  /// An owner said it holds the token of `queryID`, from `address`: the answer to a who-has
  /// or a probe (ask it there), or to a query whose cookie it refused (ask once more, with
  /// the cookie the `iHave` carried).
  public mutating func ownerFound(queryID: UInt64, at address: PeerAddress, now: Date) -> [Action] {
    if outstanding[queryID] == nil, let earlier = superseded[queryID],
      let until = earlier.lateOwnerUntil, now <= until, var entry = entries[earlier.key]
    {
      // The iHave of a who-has or probe given up, shortly after (see lateOwnerWindow): late,
      // not absent (a crowded segment answers slowly; an iHave is sealed, so only the
      // project's devices send one). Its id becomes the question's: the query goes under it,
      // and the id of a who-has still out is kept as an earlier one, so the iHave that who-has
      // brings later (it answers a question no longer finding its owner) sends nothing more.
      let key = earlier.key
      switch entry.phase {
      case .findingOwner(let current, _, _, _):
        outstanding[current] = nil
        rememberEarlier(current, of: key)
        entry = entries[key]!
      case .idle:
        guard outstanding.count < configuration.maximumOutstanding else {
          // No room: where the owner answered is kept for its turn, which then asks there.
          entry.address = address
          entry.failedAddresses.removeAll { $0 == address }
          entries[key] = entry
          return []
        }
      case .asking:
        return []
      }
      superseded[queryID] = nil
      entry.earlierQueries.removeAll { $0 == queryID }
      entry.phase = .findingOwner(
        queryID: queryID, attempt: entry.nextAttempt,
        deadline: now + configuration.queryTimeout, probed: nil)
      entries[key] = entry
      outstanding[queryID] = key
    }
    guard let key = outstanding[queryID], var entry = entries[key] else { return [] }
    let mediums: DiscoveryMediums
    switch entry.phase {
    case .findingOwner(_, let attempt, _, _):
      entry.address = address
      entry.failedAddresses.removeAll { $0 == address }
      mediums = entry.mediumsSinceAnswer
      entry.phase = .asking(
        queryID: queryID, attempt: attempt, deadline: now + configuration.queryTimeout,
        mediums: mediums, resent: false)
    case .asking(_, let attempt, let deadline, let asked, resent: false):
      // Once per question: an owner that keeps refusing must not make it ping-pong.
      mediums = asked
      entry.phase = .asking(
        queryID: queryID, attempt: attempt,
        deadline: max(deadline, now + configuration.queryTimeout), mediums: asked, resent: true)
      guard let destination = entry.confirmed ?? entry.address, destination == address else {
        return []
      }
    case .asking, .idle:
      return []
    }
    entry.lastAsked = now
    entries[key] = entry
    return [.sendQuery(queryID: queryID, key: key, mediums: mediums, to: address)]
  }

  /// The owner answered `queryID` from `address` that it does not hold the handles the
  /// question left out (``PeerAnswer/handlesWanted``): they go with the next question, and
  /// the question is sent again at once, once (an owner that keeps wanting them must not make
  /// it ping-pong; the next attempt carries them anyway).
  public mutating func handlesWanted(queryID: UInt64, from address: PeerAddress, now: Date)
    -> [Action]
  {
    guard let key = outstanding[queryID], var entry = entries[key] else { return [] }
    entry.ownerHolds = nil
    entries[key] = entry
    guard case .asking(_, let attempt, let deadline, let asked, let resent) = entry.phase,
      entry.handlesResentFor != queryID, (entry.confirmed ?? entry.address) == address
    else { return [] }
    entry.phase = .asking(
      queryID: queryID, attempt: attempt,
      deadline: max(deadline, now + configuration.queryTimeout), mediums: asked, resent: resent)
    entry.handlesResentFor = queryID
    entry.lastAsked = now
    entries[key] = entry
    return [.sendQuery(queryID: queryID, key: key, mediums: asked, to: address)]
  }

  /// The answer to `queryID` arrived from `address`, sent by the owner `sender` with the
  /// digest of its handles, the mediums it hears this device on and the digest of this
  /// device's handles it holds (`holds`); nil when no question of that id waits (a late or
  /// unasked answer).
  public mutating func answered(
    queryID: UInt64, sender: Identifier, from address: PeerAddress,
    digest: HandlesDigest? = nil, hearsYou: DiscoveryMediums = [], holds: HandlesDigest? = nil,
    now: Date
  ) -> Resolution? {
    guard let key = outstanding[queryID] ?? superseded[queryID]?.key, var entry = entries[key]
    else {
      return nil
    }
    switch entry.phase {
    case .asking(let current, _, _, _, _), .findingOwner(let current, _, _, _):
      // This attempt or an earlier one of the same question (a slow transport: the answer
      // to the first attempt arrives after the second went out).
      outstanding[current] = nil
    case .idle:
      // Only an earlier attempt's answer, arriving after its round was given up.
      guard superseded[queryID] != nil else { return nil }
    }
    for id in entry.earlierQueries { superseded[id] = nil }
    entry.earlierQueries = []
    entry.phase = .idle(restUntil: nil)
    // The first address it answered from is kept while it keeps answering.
    if entry.confirmed == nil { entry.confirmed = address }
    entry.failedAddresses.removeAll { $0 == address }
    entry.owner = sender
    entry.nextAttempt = 1
    entry.failedRounds = 0
    entry.lastAnswer = now
    entry.mediumsSinceAnswer = []
    entry.answeredDigest = digest
    entry.ownerHears = hearsYou
    entry.ownerHolds = holds
    // A digest heard before the answer says nothing about it.
    entry.heardDigest = nil
    entries[key] = entry
    return Resolution(key: key, heard: entry.heard)
  }

  /// The owner of `key` sent an update nobody asked for (its publications changed, or it
  /// stopped hearing this device on a medium it said it heard it on), with the digest of its
  /// handles, the mediums it hears this device on now and the digest of this device's handles
  /// it holds. When those mediums no longer cover the ones this device heard it on since its
  /// answer, the next refresh is due at once and is a question: the owner's side of the
  /// nearness needs it.
  public mutating func updated(
    _ key: Key, digest: HandlesDigest?, hearsYou: DiscoveryMediums, holds: HandlesDigest? = nil,
    now: Date
  ) -> [Action] {
    guard var entry = entries[key], entry.lastAnswer != nil else { return [] }
    entry.answeredDigest = digest
    entry.ownerHears = hearsYou
    entry.ownerHolds = holds
    entry.heardDigest = nil
    if !entry.mediumsSinceAnswer.isSubset(of: hearsYou) { entry.lastAnswer = .distantPast }
    entries[key] = entry
    return askIfDue(key, now: now)
  }

  /// A fragment of a longer message arrived from `address` (authenticated, its message not
  /// complete yet): every question waiting on that address gets ``Configuration/queryTimeout``
  /// more from `now`, so a large answer on a slow transport (a 100 KiB answer takes seconds
  /// over GATT) is not asked for again, and sent again, while it is still arriving.
  public mutating func progress(from address: PeerAddress, now: Date) {
    extendQuestions(to: address, now: now, bounded: false)
  }

  /// Part of a datagram arrived from `address` (reported by a transport's `arriving` stream,
  /// Core's `PeerTransport`: a chunk of a GATT read, before the datagram is whole and can be
  /// authenticated): as ``progress(from:now:)``, but the attempts of a question wait no
  /// longer than ``PeerLimits/reassemblyTimeout`` after the first of them was sent, all
  /// together, since anyone at that address can send chunks that never make a datagram.
  public mutating func partArrived(from address: PeerAddress, now: Date) {
    extendQuestions(to: address, now: now, bounded: true)
  }

  private mutating func extendQuestions(to address: PeerAddress, now: Date, bounded: Bool) {
    for (queryID, key) in outstanding {
      guard var entry = entries[key], (entry.confirmed ?? entry.address) == address else {
        continue
      }
      if case .asking(queryID, let attempt, let deadline, let mediums, let resent) = entry.phase {
        var extended = now + configuration.queryTimeout
        if bounded {
          guard let asked = entry.roundAsked else { continue }
          extended = min(extended, asked + PeerLimits.reassemblyTimeout)
        }
        entry.phase = .asking(
          queryID: queryID, attempt: attempt, deadline: max(deadline, extended),
          mediums: mediums, resent: resent)
        entries[key] = entry
      }
    }
  }

  /// `local`'s publications or subscriptions changed: every owner it follows is asked again
  /// at once (when no question is out), so they learn the new handles. The question names
  /// only the mediums heard since the last answer (possibly none). Owners in `informed` are
  /// left out: they learn the new handles another way (the resolver sends its publications
  /// unasked to the devices that asked it lately, when only publications changed).
  public mutating func handlesChanged(
    local: DeviceID, now: Date, informed: Set<Identifier> = []
  ) -> [Action] {
    var actions: [Action] = []
    for key in entries.keys.sorted(by: { $0.token < $1.token }) where key.local == local {
      guard case .idle = entries[key]!.phase, entries[key]!.lastAnswer != nil else { continue }
      if let owner = entries[key]!.owner, informed.contains(owner) { continue }
      // Only the mediums heard since the last answer: the question carries the new handles,
      // and must not make the owner believe it was heard again on a medium gone quiet.
      entries[key]!.lastAnswer = nil
      actions += ask(key, now: now)
    }
    return actions
  }

  /// `local` is gone: its tokens are no longer followed.
  public mutating func removeLocal(_ local: DeviceID) {
    for key in entries.keys where key.local == local { drop(key) }
  }

  /// Stops following `token` for every local device: it became one of theirs, so there is
  /// nobody to ask (a question still out would be answered by this resolver itself).
  public mutating func forget(token: Token) {
    for key in entries.keys where key.token == token { drop(key) }
  }

  /// Time passed: questions past their deadline are asked again or given up, refreshes that
  /// fell due are asked, and tokens not heard for ``Configuration/forgetAfter`` are
  /// forgotten.
  public mutating func tick(now: Date) -> [Action] {
    var actions: [Action] = []
    // The most recently heard first: when a bound defers questions, a token heard all along
    // (a device near) goes before tokens heard once (an emitter cycling random tokens).
    // Only the entries that may act are sorted: most ticks, with hundreds of tokens heard,
    // none does.
    let order = entries.compactMap { key, entry in
      Self.mayAct(entry, now: now, configuration: configuration) ? (key, entry.lastHeard) : nil
    }.sorted { ($1.1, $0.0.token) < ($0.1, $1.0.token) }.map(\.0)
    for key in order {
      guard let entry = entries[key] else { continue }
      if now.timeIntervalSince(entry.lastHeard) >= configuration.forgetAfter.seconds {
        drop(key)
        actions.append(.forget(key, owner: entry.owner))
        continue
      }
      switch entry.phase {
      case .findingOwner(let queryID, let attempt, let deadline, .some(let probed)):
        guard now >= deadline else { continue }
        outstanding[queryID] = nil
        rememberEarlier(queryID, of: key, lateOwnerUntil: now + Self.lateOwnerWindow)
        // Nobody with the key answered there: never again for this token, and everyone is
        // asked at once (a forger announcing the owner's token with its own address must not
        // keep a newcomer from the owner).
        entries[key]!.failedAddresses.append(probed)
        if entries[key]!.failedAddresses.count > configuration.maximumFailedAddresses {
          entries[key]!.failedAddresses.removeFirst()
        }
        if entry.address == probed { entries[key]!.address = nil }
        actions += ask(key, now: now, attempt: attempt)
      case .findingOwner(let queryID, let attempt, let deadline, nil),
        .asking(let queryID, let attempt, let deadline, _, _):
        guard now >= deadline else { continue }
        outstanding[queryID] = nil
        if case .findingOwner = entry.phase {
          rememberEarlier(
            queryID, of: key, lateOwnerUntil: now + Self.lateOwnerWindow)
        } else {
          rememberEarlier(queryID, of: key)
        }
        if attempt >= configuration.maximumAttempts {
          entries[key]!.phase = .idle(restUntil: now + rest(after: entry))
          entries[key]!.nextAttempt = 1
          if entry.owner == nil { entries[key]!.failedRounds += 1 }
          if let confirmed = entry.confirmed {
            // The owner's address failed: a newer way back (if any) may be tried next.
            entries[key]!.confirmed = nil
            if entry.address == confirmed { entries[key]!.address = nil }
          } else {
            entries[key]!.address = nil
          }
        } else {
          actions += ask(key, now: now, attempt: attempt + 1)
        }
      case .idle:
        actions += askIfDue(key, now: now)
      }
    }
    return actions
  }

  /// How long after a who-has or probe was given up its `iHave` still counts: the wire's
  /// freshness window (``PeerLimits/clockWindowMilliseconds``, 30 s), the time a query is
  /// answered in. Bounded, so that an `iHave` held back and relayed much later (it carries no
  /// time the receiver judges) cannot move a question to wherever it is relayed from; not
  /// shorter, because on a crowded segment the `iHave`s that turn a burst around come
  /// seconds late (at 200 devices on one machine a 4 s window left the exchange asking
  /// again in 3 runs of 3, a 30 s one came to rest).
  static let lateOwnerWindow = Duration.milliseconds(Int64(PeerLimits.clockWindowMilliseconds))

  /// Whether `entry` may do anything at a tick at `now`: be forgotten, time out, or (idle)
  /// ask. A superset of what ``tick(now:)`` acts on; the rest it would leave as they are.
  private static func mayAct(_ entry: Entry, now: Date, configuration: Configuration) -> Bool {
    if now.timeIntervalSince(entry.lastHeard) >= configuration.forgetAfter.seconds {
      return true
    }
    switch entry.phase {
    case .findingOwner(_, _, let deadline, _), .asking(_, _, let deadline, _, _):
      return now >= deadline
    case .idle(let restUntil):
      if let restUntil, now < restUntil { return false }
      guard let lastAnswer = entry.lastAnswer else { return true }
      if let heard = entry.heardDigest, heard != entry.answeredDigest { return true }
      return now.timeIntervalSince(lastAnswer) >= configuration.refreshInterval.seconds
    }
  }

  // MARK: Asking

  /// How long `entry` rests after a failed round: doubling per round while never answered.
  private func rest(after entry: Entry) -> Duration {
    guard entry.owner == nil else { return configuration.restAfterFailure }
    let factor = Double(1 << min(entry.failedRounds, 20))
    let seconds = min(
      configuration.restAfterFailure.seconds * factor, configuration.maximumRest.seconds)
    return .milliseconds(Int64(seconds * 1000))
  }

  /// Takes one who-has from the resolver-wide budget at `now`; false when it is spent. The
  /// budget refills at this device's share of the segment's who-has rate.
  private mutating func takeWhoHas(now: Date) -> Bool {
    let rate = whoHasRate(now: now)
    let burst = max(1, configuration.whoHasBurst * rate / configuration.whoHasPerSecond)
    if let last = whoHasBudgetAt {
      let elapsed = max(now.timeIntervalSince(last), 0)
      whoHasBudget = min(burst, whoHasBudget + elapsed * rate)
    } else {
      whoHasBudget = min(whoHasBudget, burst)
    }
    whoHasBudgetAt = now
    guard whoHasBudget >= 1 else { return false }
    whoHasBudget -= 1
    return true
  }

  /// This device's who-has per second at `now`: the segment's rate shared with the devices
  /// heard sending who-has lately (see ``Configuration/segmentWhoHasPerSecond``).
  public func whoHasRate(now: Date) -> Double {
    let window = configuration.whoHasSendersWindow.seconds
    let others = whoHasSenders.values.reduce(0) {
      $0 + (now.timeIntervalSince($1) < window ? 1 : 0)
    }
    let share = configuration.segmentWhoHasPerSecond / Double(others + 1)
    return min(
      configuration.whoHasPerSecond,
      max(min(configuration.minimumWhoHasPerSecond, configuration.whoHasPerSecond), share))
  }

  /// Another device (at `sender`) sent a who-has, authenticated, at `now`: it shares the
  /// segment's who-has rate with this one for ``Configuration/whoHasSendersWindow``.
  public mutating func heardWhoHas(from sender: PeerAddress, now: Date) {
    if whoHasSenders[sender] == nil, whoHasSenders.count >= Self.maximumWhoHasSenders {
      let window = configuration.whoHasSendersWindow.seconds
      whoHasSenders = whoHasSenders.filter { now.timeIntervalSince($0.value) < window }
      guard whoHasSenders.count < Self.maximumWhoHasSenders else { return }
    }
    whoHasSenders[sender] = now
  }

  private var outstandingWhoHas: Int {
    outstanding.values.reduce(0) { count, key in
      if case .findingOwner(_, _, _, nil) = entries[key]?.phase { count + 1 } else { count }
    }
  }

  private mutating func askIfDue(_ key: Key, now: Date) -> [Action] {
    guard let entry = entries[key], case .idle(let restUntil) = entry.phase else { return [] }
    if let restUntil, now < restUntil { return [] }
    if let lastAnswer = entry.lastAnswer {
      if let heard = entry.heardDigest, let answered = entry.answeredDigest, heard != answered {
        // The owner's handles changed since its answer (a digest is only ever one heard
        // after the last answer): ask now, but a digest that keeps differing (a stale one
        // replayed by a key holder) not more than once per query timeout, and only while
        // the token is heard.
        let asked = entry.lastAsked.map { now.timeIntervalSince($0) } ?? .infinity
        guard asked >= configuration.queryTimeout.seconds,
          entry.lastAsked.map({ entry.lastHeard > $0 }) ?? true
        else { return [] }
        return ask(key, now: now, attempt: entry.nextAttempt)
      }
      // A refresh: due by time, and only for a token heard since the last refresh (a
      // question or a local one).
      guard now.timeIntervalSince(lastAnswer) >= configuration.refreshInterval.seconds,
        entry.lastAsked.map({ entry.lastHeard > $0 }) ?? true,
        entry.lastLocalRefresh.map({ entry.lastHeard > $0 }) ?? true
      else { return [] }
      if let owner = entry.owner, entry.heardDigest != nil,
        entry.heardDigest == entry.answeredDigest,
        entry.mediumsSinceAnswer.isSubset(of: entry.ownerHears)
      {
        // Unchanged, and the owner hears us itself: nothing to ask. The digest is used up, so
        // the next local refresh needs one heard after this one.
        entries[key]!.lastAnswer = now
        entries[key]!.lastLocalRefresh = now
        entries[key]!.heardDigest = nil
        return [.refreshedLocally(key, owner: owner)]
      }
    }
    return ask(key, now: now, attempt: entry.nextAttempt)
  }

  private mutating func ask(_ key: Key, now: Date, attempt: Int = 1) -> [Action] {
    guard var entry = entries[key] else { return [] }
    // Put off by a bound, the question waits idle with its attempt count, asked at a tick.
    entry.phase = .idle(restUntil: nil)
    entry.nextAttempt = attempt
    // An answered address is queried; a way back is probed first, unless its transport's
    // addresses cannot be forged.
    var destination = entry.confirmed
    var probe: PeerAddress?
    if destination == nil, let address = entry.address, !entry.failedAddresses.contains(address) {
      if configuration.verifiedTransports.contains(address.transport) {
        destination = address
      } else {
        probe = address
      }
    }
    var room = outstanding.count < configuration.maximumOutstanding
    if room, destination == nil, probe == nil, configuration.canAskEveryone {
      room = outstandingWhoHas < configuration.maximumOutstandingWhoHas
      // The resolver-wide budget is spent only on a who-has that goes out.
      if room { room = takeWhoHas(now: now) }
    }
    guard room else {
      deferredQuestions += 1
      entries[key] = entry
      return []
    }
    let queryID = nextQueryID()
    // The wait doubles with each attempt.
    var timeout = configuration.queryTimeout * (1 << min(attempt - 1, 16))
    if attempt == 1, entry.confirmed == nil, destination != nil {
      timeout += configuration.connectionAllowance ?? .zero
    }
    let deadline = now + timeout
    let action: Action
    if let address = destination {
      let mediums = entry.mediumsSinceAnswer
      entry.phase = .asking(
        queryID: queryID, attempt: attempt, deadline: deadline, mediums: mediums, resent: false)
      action = .sendQuery(queryID: queryID, key: key, mediums: mediums, to: address)
    } else if let probe {
      // One timeout, not a doubling one: the fallback must come soon.
      entry.phase = .findingOwner(
        queryID: queryID, attempt: attempt, deadline: now + configuration.queryTimeout,
        probed: probe)
      action = .probe(queryID: queryID, key: key, to: probe)
    } else if configuration.canAskEveryone {
      entry.phase = .findingOwner(
        queryID: queryID, attempt: attempt, deadline: deadline, probed: nil)
      action = .sendWhoHas(queryID: queryID, key: key)
    } else {
      // Nowhere to ask: rest, and try again if a sighting brings a way back.
      entry.phase = .idle(restUntil: now + configuration.restAfterFailure)
      entries[key] = entry
      return []
    }
    entry.lastAsked = now
    if attempt == 1 { entry.roundAsked = now }
    entries[key] = entry
    outstanding[queryID] = key
    return [action]
  }

  private mutating func drop(_ key: Key) {
    guard let entry = entries.removeValue(forKey: key) else { return }
    switch entry.phase {
    case .findingOwner(let queryID, _, _, _), .asking(let queryID, _, _, _, _):
      outstanding[queryID] = nil
    case .idle: break
    }
    for id in entry.earlierQueries { superseded[id] = nil }
  }

  /// Keeps `queryID`, a question of `key` asked again or given up, valid for a late answer;
  /// a who-has or a probe (`findingOwner`) also for a late `iHave` until `lateOwnerUntil`.
  private mutating func rememberEarlier(
    _ queryID: UInt64, of key: Key, lateOwnerUntil: Date? = nil
  ) {
    guard entries[key] != nil else { return }
    superseded[queryID] = Earlier(key: key, lateOwnerUntil: lateOwnerUntil)
    entries[key]!.earlierQueries.append(queryID)
    if entries[key]!.earlierQueries.count > Self.maximumEarlierQueries {
      superseded[entries[key]!.earlierQueries.removeFirst()] = nil
    }
  }

  private mutating func nextQueryID() -> UInt64 {
    while true {
      var system = SystemRandomNumberGenerator()
      let id = seeded?.next() ?? system.next()
      if id != 0, outstanding[id] == nil, superseded[id] == nil { return id }
    }
  }
}

extension Date {
  static func + (date: Date, duration: Duration) -> Date {
    date.addingTimeInterval(duration.seconds)
  }
}
